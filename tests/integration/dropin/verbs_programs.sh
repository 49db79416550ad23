#!/usr/bin/env bash
# Unmodified libibverbs programs (ibverbs-utils, perftest) over rnic-run,
# between two rnic processes on bridged taps: the device listing, the
# rc/srq/ud pingpongs over RoCE with and without completion events, 1 B
# and 1 MiB messages, and perftest's RoCE tests without rdma_cm (-x 1:
# the IPv4-mapped GID, exchanged over TCP on the namespace's loopback).
# Then perftest's seven tests with -R (rdma_cm) over iWARP and RoCE.
# Each program's own report is checked, not only its exit status.
tools="ibv_devices ibv_devinfo ibv_rc_pingpong ibv_srq_pingpong ibv_ud_pingpong ib_write_bw"
. "$(dirname "$0")/oob_pair.sh"

# the devices as users know them
ip netns exec "$ns" "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 -- ibv_devices \
	> "$work/devices.c" 2>&1 || bad "ibv_devices exit $?"
expect devices c '^\s+rnic0\s+[0-9a-f]{16}$'
expect devices c '^\s+rnic0_roce\s+[0-9a-f]{16}$'
ip netns exec "$ns" "$run" --vdev net_tap0,iface=rv0 --ip 192.0.2.1/24 --transport roce \
	-- ibv_devinfo -v > "$work/devinfo.c" 2>&1 || bad "ibv_devinfo exit $?"
expect devinfo c 'hca_id:\s+rnic0_roce'
expect devinfo c 'transport:\s+InfiniBand \(0\)'
expect devinfo c 'transport:\s+iWARP \(1\)'
expect devinfo c 'state:\s+PORT_ACTIVE \(4\)'
expect devinfo c 'link_layer:\s+Ethernet'
expect devinfo c 'GID\[  1\]:\s+::ffff:192\.0\.2\.1, RoCE v2'

# ibv_rc_pingpong: busy polling and completion events, small and large
for opt in "-s 1" "-e -s 1" "-s 1048576 -n 20" "-e -s 65536"; do
	name="rc${opt// /}"
	if oob_pair "$name" roce "ibv_rc_pingpong -g 1 $opt" "ibv_rc_pingpong -g 1 $opt 127.0.0.1"; then
		expect "$name" s 'iters in [0-9.]+ seconds'
		expect "$name" c 'iters in [0-9.]+ seconds'
		expect "$name" c 'remote address: .*GID ::ffff:192\.0\.2\.1'
	fi
done
oob_pair srq roce "ibv_srq_pingpong -g 1 -n 200" "ibv_srq_pingpong -g 1 -n 200 127.0.0.1" &&
	expect srq c 'iters in [0-9.]+ seconds'
oob_pair ud roce "ibv_ud_pingpong -g 1 -n 200" "ibv_ud_pingpong -g 1 -n 200 127.0.0.1" &&
	expect ud c 'iters in [0-9.]+ seconds'

# perftest over RoCE without rdma_cm: the report's figures line
for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw; do
	oob_pair "$t" roce "$t -x 1 -F -n 200" "$t -x 1 -F -n 200 127.0.0.1" &&
		expect "$t" c '^\s*[0-9]+\s+200\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'
done
for t in ib_write_lat ib_read_lat ib_send_lat; do
	oob_pair "$t" roce "$t -x 1 -F -n 200" "$t -x 1 -F -n 200 127.0.0.1" &&
		expect "$t" c '^\s*2\s+200\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'
done
oob_pair write_bw_all roce "ib_write_bw -x 1 -F -a -n 5" "ib_write_bw -x 1 -F -a -n 5 127.0.0.1" &&
	expect write_bw_all c "^\\s*8388608\\s+5\\s+"
oob_pair write_bw_dq roce "ib_write_bw -x 1 -F -q 4 -D 2 --report_gbits" \
	"ib_write_bw -x 1 -F -q 4 -D 2 --report_gbits 127.0.0.1" &&
	expect write_bw_dq c '^\s*65536\s+[0-9]+\s+[0-9.]+\s+[0-9.]+'

# perftest with -R (rdma_cm: its own exchange and the data QPs), both
# transports: the client's --transport picks its device, the server's
# listener hears both
for tr in iwarp roce; do
	for t in ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw; do
		RETRY=1 oob_pair "$t-R-$tr" "$tr" "$t -R -n 200" "$t -R -n 200 192.0.2.1" &&
			expect "$t-R-$tr" c '^\s*[0-9]+\s+200\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'
	done
	for t in ib_write_lat ib_read_lat ib_send_lat; do
		RETRY=1 oob_pair "$t-R-$tr" "$tr" "$t -R -n 200" "$t -R -n 200 192.0.2.1" &&
			expect "$t-R-$tr" c '^\s*2\s+200\s+[0-9.]+\s+[0-9.]+\s+[0-9.]+'
	done
done
finish
