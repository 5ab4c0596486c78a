# Web-search flow sizes (DCTCP, SIGCOMM 2010; the CDF of websearch.cdf, as used
# by the RoCC, HPCC, RCC and ACC evaluations) with every size divided by 10.
# For 1 Gb/s experiments that stand in for a 10 Gb/s network
# (configs/experiments/incast-websearch.toml): each flow then occupies the
# link for the same time as the unscaled flow at 10 Gb/s, and a run of 1 s
# holds enough flows (about 300 at 50 % load) for per-size FCT statistics;
# with the unscaled sizes (mean 1.6 MB) 1 s at 1 Gb/s holds about 40.
1000 0.15
2000 0.2
3000 0.3
5000 0.4
8000 0.53
20000 0.6
100000 0.7
200000 0.8
500000 0.9
1000000 0.97
3000000 1
