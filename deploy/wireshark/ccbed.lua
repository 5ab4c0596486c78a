-- ccbed.lua: Wireshark/tshark decoding of ccbed's own headers (docs/capture.md).
--
--   tshark -X lua_script:deploy/wireshark/ccbed.lua -r FILE -Y ccbed.int
--   or copy this file to ~/.local/lib/wireshark/plugins/
--
-- Wireshark decodes the standard parts itself (Ethernet, IPv4, UDP 4791 as
-- InfiniBand BTH "RRoCE", AETH, CNP, ICMP, PFC). This adds protocol "ccbed"
-- (fields ccbed.*) for what is ccbed's, with the layouts of the Go package
-- wire, which is the source of truth (wire/wireshark_test.go checks this file
-- against frames wire's builders write):
--   BTH byte 8, low 7 bits: ccbed flags FlagINT 0x40, FlagAckExt 0x20 (wire/bth.go)
--   data (SEND/WRITE opcodes): [INT if FlagINT] DataHeader (wire/ccbed.go, int.go)
--   ACK/NAK (opcode 0x11): AETH, AckExt if FlagAckExt, echoed INT if FlagINT
--   opcodes 0xC0/0xC1: P4QCN/QCN FeedbackMsg after the BTH (wire/feedback.go)
--   ICMP type 253 code 0 version 1: RoCC rate message (wire/rocc.go)
--
-- It is a postdissector that reads the frame at the offsets of the fields
-- Wireshark found (infiniband.bth.opcode, icmp.type). Wireshark 4.0's
-- InfiniBand dissector hands only data packets' payloads to its heuristic
-- list "infiniband.payload" (not the bytes after an ACK's AETH nor the bodies
-- of opcodes 0xC0/0xC1), and ICMP has no table for its types, so one
-- postdissector decodes every kind the same way.

local ccbed = Proto("ccbed", "ccbed headers")

-- Frame kinds, named as wire.Kind's String names them.
local f_kind = ProtoField.string("ccbed.kind", "Kind")

-- BTH flags (wire/bth.go).
local f_flags = ProtoField.uint8("ccbed.flags", "ccbed BTH flags", base.HEX, nil, 0x7f)
local f_flag_int = ProtoField.bool("ccbed.flags.int", "INT stack follows", 8, nil, 0x40)
local f_flag_ackext = ProtoField.bool("ccbed.flags.ackext", "ACK extension follows", 8, nil, 0x20)

-- DataHeader (wire/ccbed.go).
local f_send_ts = ProtoField.uint64("ccbed.data.send_ts", "Send timestamp (ns)")

-- INT (wire/int.go): nHop 4 | pathID 12, then 5 hop records of 8 bytes:
-- B 4 | TS 24 (ns) | txBytes 20 (128 B units) | qLen 16 (80 B units).
local f_nhop = ProtoField.uint16("ccbed.int.nhop", "nHop", base.DEC, nil, 0xf000)
local f_path = ProtoField.uint16("ccbed.int.path_id", "pathID", base.HEX, nil, 0x0fff)
local f_hop_b = ProtoField.uint8("ccbed.int.hop.b", "B (link speed code)", base.DEC, nil, 0xf0)
local f_hop_bps = ProtoField.uint64("ccbed.int.hop.link_bps", "Link speed (bits/s)")
local f_hop_ts = ProtoField.uint32("ccbed.int.hop.ts", "TS (ns, mod 2^24)", base.DEC, nil, 0x0ffffff0)
local f_hop_txu = ProtoField.uint24("ccbed.int.hop.tx_units", "txBytes (128 B units, mod 2^20)", base.DEC, nil, 0x0fffff)
local f_hop_tx = ProtoField.uint32("ccbed.int.hop.tx_bytes", "txBytes (bytes)")
local f_hop_qu = ProtoField.uint16("ccbed.int.hop.qlen_units", "qLen (80 B units)")
local f_hop_q = ProtoField.uint32("ccbed.int.hop.qlen_bytes", "qLen (bytes)")

-- AckExt (wire/ccbed.go).
local marks = { [0] = "none", [1] = "UE", [2] = "CE" }
local f_echo_ts = ProtoField.uint64("ccbed.ack.echo_ts", "Echoed send timestamp (ns)")
local f_mark = ProtoField.uint8("ccbed.ack.mark", "Mark", base.DEC, marks)
local f_nflows = ProtoField.uint32("ccbed.ack.active_flows", "Active flows N")
local f_window = ProtoField.int64("ccbed.ack.window", "Window (bytes, 0 none)")
local f_recv = ProtoField.uint32("ccbed.ack.recv_bytes", "Bytes received last round B_R")

-- Shared by RoCCRate (wire/rocc.go) and FeedbackMsg (wire/feedback.go).
local f_cp = ProtoField.uint32("ccbed.cp_id", "CP id", base.HEX)
local f_src = ProtoField.ipv4("ccbed.flow.src", "Flow source")
local f_dst = ProtoField.ipv4("ccbed.flow.dst", "Flow destination")
local f_sport = ProtoField.uint16("ccbed.flow.sport", "Flow UDP source port")
local f_dport = ProtoField.uint16("ccbed.flow.dport", "Flow UDP destination port")
local f_proto = ProtoField.uint8("ccbed.flow.proto", "Flow protocol")
local f_qp = ProtoField.uint24("ccbed.flow.qp", "Flow destination QP", base.HEX)

-- RoCCRate.
local f_rver = ProtoField.uint8("ccbed.rocc.version", "Version")
local f_runits = ProtoField.uint32("ccbed.rocc.rate_units", "Fair rate (units of Delta_F)")
local f_deltaf = ProtoField.uint32("ccbed.rocc.delta_f_bps", "Delta_F (bits/s)")
local f_rate = ProtoField.uint64("ccbed.rocc.rate_bps", "Fair rate (bits/s)")

-- FeedbackMsg.
local f_fb = ProtoField.uint8("ccbed.fb.fb", "|Fb| (6 bits)", base.DEC, nil, 0x3f)
local f_qoff = ProtoField.int32("ccbed.fb.qoff", "Qoff (bytes)")
local f_qdelta = ProtoField.int32("ccbed.fb.qdelta", "Qdelta (bytes)")

ccbed.fields = {
	f_kind, f_flags, f_flag_int, f_flag_ackext, f_send_ts,
	f_nhop, f_path, f_hop_b, f_hop_bps, f_hop_ts, f_hop_txu, f_hop_tx, f_hop_qu, f_hop_q,
	f_echo_ts, f_mark, f_nflows, f_window, f_recv,
	f_cp, f_src, f_dst, f_sport, f_dport, f_proto, f_qp,
	f_rver, f_runits, f_deltaf, f_rate, f_fb, f_qoff, f_qdelta,
}

local BTH_LEN, AETH_LEN, ACKEXT_LEN, INT_LEN, INT_HOP_LEN = 12, 4, 28, 42, 8
local MAX_HOPS, DATA_HDR_LEN, FEEDBACK_LEN, ROCC_LEN = 5, 8, 28, 36
local FLAG_INT, FLAG_ACKEXT = 0x40, 0x20

-- B code to bits/s (wire/int.go linkSpeeds; 0 unknown).
local link_speeds = {
	[0] = 0, 1e9, 2.5e9, 5e9, 10e9, 20e9, 25e9, 40e9,
	50e9, 56e9, 100e9, 200e9, 400e9, 800e9, 1.6e12, 0,
}

local bth_opcode = Field.new("infiniband.bth.opcode")
local icmp_type = Field.new("icmp.type")
local macc_opcode = Field.new("macc.opcode")

-- is_data reports whether op is a SEND or RDMA WRITE opcode (wire.IsDataOpcode).
local function is_data(op)
	return (op <= 0x04 and op ~= 0x03) or (op >= 0x06 and op <= 0x0a and op ~= 0x09)
end

-- add_int decodes the INT stack at off into tree; it reports whether the
-- stack's bytes are in the capture.
local function add_int(tvb, tree, off, label)
	if tvb:len() < off + INT_LEN then return false end
	local t = tree:add(ccbed, tvb(off, INT_LEN), label)
	t:add(f_nhop, tvb(off, 2))
	t:add(f_path, tvb(off, 2))
	local n = tvb(off, 1):bitfield(0, 4)
	if n > MAX_HOPS then n = MAX_HOPS end
	for i = 0, n - 1 do
		local h = off + 2 + i * INT_HOP_LEN
		local ht = t:add(ccbed, tvb(h, INT_HOP_LEN), "Hop " .. i)
		ht:add(f_hop_b, tvb(h, 1))
		ht:add(f_hop_bps, tvb(h, 1), UInt64(link_speeds[tvb(h, 1):bitfield(0, 4)])):set_generated()
		ht:add(f_hop_ts, tvb(h, 4))
		ht:add(f_hop_txu, tvb(h + 3, 3))
		ht:add(f_hop_tx, tvb(h + 3, 3), tvb(h + 3, 3):bitfield(4, 20) * 128):set_generated()
		ht:add(f_hop_qu, tvb(h + 6, 2))
		ht:add(f_hop_q, tvb(h + 6, 2), tvb(h + 6, 2):uint() * 80):set_generated()
	end
	return true
end

-- add_flow decodes a flow's addresses and ports (12 bytes at off).
local function add_flow(tvb, tree, off)
	tree:add(f_src, tvb(off, 4))
	tree:add(f_dst, tvb(off + 4, 4))
	tree:add(f_sport, tvb(off + 8, 2))
	tree:add(f_dport, tvb(off + 10, 2))
end

-- dissect_roce decodes what follows the BTH at b; it returns the kind.
local function dissect_roce(tvb, pinfo, tree, b)
	local op, flags = tvb(b, 1):uint(), tvb(b + 8, 1):uint() % 0x80
	local t = tree:add(ccbed, tvb(b, tvb:len() - b))
	t:add(f_flags, tvb(b + 8, 1))
	t:add(f_flag_int, tvb(b + 8, 1))
	t:add(f_flag_ackext, tvb(b + 8, 1))
	local p = b + BTH_LEN
	local kind
	if is_data(op) then
		kind = "data"
		if bit.band(flags, FLAG_INT) ~= 0 then
			if not add_int(tvb, t, p, "INT stack") then return kind, t end
			p = p + INT_LEN
		end
		if tvb:len() >= p + DATA_HDR_LEN then t:add(f_send_ts, tvb(p, DATA_HDR_LEN)) end
	elseif op == 0x11 then
		local syn = tvb:len() > p and bit.band(tvb(p, 1):uint(), 0xe0) or 0
		kind = (syn == 0x60 or syn == 0x20) and "nak" or "ack"
		p = p + AETH_LEN
		if bit.band(flags, FLAG_ACKEXT) ~= 0 and tvb:len() >= p + ACKEXT_LEN then
			local e = t:add(ccbed, tvb(p, ACKEXT_LEN), "ACK extension")
			e:add(f_echo_ts, tvb(p, 8))
			e:add(f_mark, tvb(p + 8, 1))
			e:add(f_nflows, tvb(p + 12, 4))
			e:add(f_window, tvb(p + 16, 8))
			e:add(f_recv, tvb(p + 24, 4))
			if bit.band(flags, FLAG_INT) ~= 0 then add_int(tvb, t, p + ACKEXT_LEN, "Echoed INT stack") end
		end
	elseif op == 0x81 then
		kind = "cnp" -- Wireshark 4.0 calls opcode 0x81 "Unknown OpCode"
		pinfo.cols.info = string.format("CNP QP=0x%06x", tvb(b + 5, 3):uint())
	elseif op == 0xc0 or op == 0xc1 then
		kind = op == 0xc0 and "p4qcn-fb" or "qcn-fb"
		pinfo.cols.protocol = "ccbed"
		pinfo.cols.info = (op == 0xc0 and "P4QCN" or "QCN") .. " feedback QP=" .. string.format("0x%06x", tvb(b + 5, 3):uint())
		if tvb:len() >= p + FEEDBACK_LEN then
			local m = t:add(ccbed, tvb(p, FEEDBACK_LEN), "Feedback")
			m:add(f_cp, tvb(p, 4))
			add_flow(tvb, m, p + 4)
			m:add(f_fb, tvb(p + 16, 1))
			m:add(f_qoff, tvb(p + 20, 4))
			m:add(f_qdelta, tvb(p + 24, 4))
			pinfo.cols.info:append(string.format(" Fb=%d Qoff=%d Qdelta=%d", tvb(p + 16, 1):uint() % 64, tvb(p + 20, 4):int(), tvb(p + 24, 4):int()))
		end
	end
	return kind, t
end

-- dissect_rocc decodes a RoCC rate message at o; it returns nil unless the
-- message is one (type 253 code 0 version 1, whole).
local function dissect_rocc(tvb, pinfo, tree, o)
	if tvb:len() < o + ROCC_LEN or tvb(o + 1, 1):uint() ~= 0 or tvb(o + 4, 1):uint() ~= 1 then return nil end
	local t = tree:add(ccbed, tvb(o, ROCC_LEN), "RoCC rate message")
	local rate = tvb(o + 8, 4):uint() * tvb(o + 12, 4):uint()
	t:add(f_rver, tvb(o + 4, 1))
	t:add(f_runits, tvb(o + 8, 4))
	t:add(f_deltaf, tvb(o + 12, 4))
	t:add(f_rate, tvb(o + 8, 8), UInt64(rate)):set_generated()
	t:add(f_cp, tvb(o + 16, 4))
	add_flow(tvb, t, o + 20)
	t:add(f_proto, tvb(o + 32, 1))
	t:add(f_qp, tvb(o + 33, 3))
	pinfo.cols.protocol = "ccbed"
	pinfo.cols.info = string.format("RoCC rate %.6g Gb/s for %s:%d -> %s:%d QP=0x%06x", rate / 1e9,
		tostring(tvb(o + 20, 4):ipv4()), tvb(o + 28, 2):uint(), tostring(tvb(o + 24, 4):ipv4()),
		tvb(o + 30, 2):uint(), tvb(o + 33, 3):uint())
	return "rocc-rate", t
end

function ccbed.dissector(tvb, pinfo, tree)
	local kind, t
	local op, it, mc = bth_opcode(), icmp_type(), macc_opcode()
	if op then
		kind, t = dissect_roce(tvb, pinfo, tree, op.offset)
	elseif it and it.value == 253 then
		kind, t = dissect_rocc(tvb, pinfo, tree, it.offset)
	elseif mc and mc.value == 0x0101 then
		kind = "pfc"
		t = tree:add(ccbed)
	end
	if kind then t:add(f_kind, kind):set_generated() end
end

register_postdissector(ccbed)
