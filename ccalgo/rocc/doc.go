// Package rocc implements RoCC, the switch-driven rate-based congestion control of
// D. Menikkumbura, P. Taheri, E. Vanini, S. Fahmy, P. Eugster and T. Edsall,
// "Congestion Control for Datacenter Networks: A Control-Theoretic Approach",
// IEEE TPDS 34(5), 2023. Where the paper is silent, ccbed's choices are listed
// below among the deviations.
//
// It has two roles, registered under the scheme name "rocc":
//
//   - CP (switch egress port, cp.go): Algorithm 1 of Section III-B, the fair-rate
//     computation run every T: multiplicative decrease on a full queue (lines 2-3)
//     or a fast-growing queue (lines 4-5), otherwise the PI update of line 8,
//     F <- F - alpha (Q_cur - Q_ref) - beta (Q_cur - Q_old), with alpha and beta
//     auto-tuned in six levels by shifts (lines 15-21, Section V-C), bounds
//     [F_min, F_max] (lines 9-12) and Q_old <- Q_cur (line 13). Queue and rate are
//     in the integer units of Section III-B and Table II: Delta_Q-byte chunks and
//     Delta_F-bit/s chunks. After each computation the CP sends one rate message
//     (ccalgo.FeedbackRoCCRate, ICMP type 253 on the wire, Section III-C) to every
//     flow in its flow table, the table of flows currently in the queue of Section
//     III-D option 1 (flowtable.go), bounded as in the FPGA design of Section IV-C.
//   - RP (sender QP, rp.go): Algorithm 2 of Section III-E: accept a rate when it is
//     not above the current rate or comes from the CP of the current limiter
//     (line 4), reset the timer (line 7), double the rate at each timer expiry
//     (line 12) up to R_max and then remove the rate limiter (lines 9-10).
//
// There is no NP: RoCC needs nothing from the receiver (Table I).
//
// Defaults (params.go) are those of Section VI ("System parameters") and VI-B,
// with ccbed's choices where the paper gives none (deviation 7):
// Delta_F = 10 Mb/s, Delta_Q = 600 B, F_min = 10, F_max = link / Delta_F,
// T = 40 us, Q_ref / Q_mid / Q_max = 75 / 150 / 210 KB at 10 Gb/s (DPDK
// testbed, Section VI-B), 150 / 300 / 360 KB at 40 Gb/s and 300 / 600 / 660 KB
// at 100 Gb/s; alpha~ / beta~ = 0.3 / 1.5 at 10 and 40 Gb/s and 0.45 / 2.25 at
// 100 Gb/s.
//
// Deviations from the paper, and why:
//
//  1. F is kept in fixed point with FracBits fractional bits below one Delta_F
//     unit. Algorithm 1 multiplies integers by the fractional gains alpha~/ratio
//     and beta~/ratio (0.3/32 = 0.009 at the lowest level); in pure integers every
//     step of less than one unit would be lost and the PI would stall. The paper's
//     own simulator gives "the fair rate fixed point precision to mimic hardware"
//     (Section VI). alpha~ and beta~ are fixed-point constants too, and the
//     division by ratio is a right shift of them, as Section III-B prescribes.
//     The rate message and FairRateBps carry the integer part, floor(F) units.
//  2. AUTO_TUNE as printed leaves alpha and beta unset when its loop body never
//     runs (F >= F_max/2); ccbed takes ratio = level/2 = 1 there, so
//     alpha = alpha~ and beta = beta~ (ratio is 1, 2, 4, 8, 16 or 32).
//  3. The comparisons F > F_max/8 and F < F_max/level compare the fixed-point F
//     with the exact quotient (F_max shifted right), not with a truncated integer.
//  4. Algorithm 2, line 9 tests R_cur > R_max after an unbounded doubling. Here the
//     doubling is capped at R_max (the sender cannot exceed its line rate anyway)
//     and the limiter is removed at the first expiry that finds R_cur = R_max. The
//     "if its queue is empty" condition of line 10 has no counterpart: ccbed's
//     pacer holds no per-limiter queue, so the limiter is removed at once.
//  5. The RP timer period is not given in the paper; it is the parameter
//     rp_timer_ns, 0 (the default) meaning 2 T of the CP (ccbed's choice: a CP
//     that stops sending rate messages means the flow has left its queue).
//  6. A rate message whose rate is zero is ignored by the RP (it cannot come from
//     Algorithm 1, whose F is at least F_min >= 1, and would stall the flow).
//  7. Queue thresholds for link speeds the paper does not list are interpolated
//     (params.go, DefaultParams): linearly in the link rate between the 10, 40 and
//     100 Gb/s points, and in proportion to the link rate below 10 Gb/s or above
//     100 Gb/s (keeping Q_max > Q_mid > Q_ref); alpha~ and beta~ likewise
//     interpolate between the 40 and 100 Gb/s values and stay at the end values
//     outside that range. The paper gives no alpha~/beta~ for 10 Gb/s: 0.3 / 1.5
//     (ccbed's choice, the 40 Gb/s values).
//  8. The flow table (Section III-D option 1, "the flows currently in the queue")
//     keeps, per flow, a count of its packets in the queue (incremented at
//     enqueue, decremented at dequeue) and a flag "entered the queue since the
//     last computation"; a flow is in the table while either holds, and every
//     flow in the table gets the rate message at each T while the queue is not
//     empty (ccbed's reading of option 1: the flows seen in the queue since the
//     last computation). With the count alone, a slow flow that happens to have
//     no packet queued at the instant of T misses messages, and its RP timer
//     (2 T) then doubles its rate although it still congests the port. When the
//     table is full, further flows are not tracked (and get no message) until
//     entries free up; the CP counts them (CPStats.TableFull). Entries live in
//     an open-addressing hash table (a dequeue finds its entry by the tag its
//     enqueue gave, index and generation) rather than the FPGA's circular array.
package rocc
