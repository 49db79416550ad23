# Sourced by the interop tests that drive a Linux guest (shared/interop)
# from the namespace rnic-peers. Needs guest_ip (the guest's address), tap
# (rnic's net_tap interface) and work (a directory for logs).

# gsh CMD: CMD in the guest's root shell (TCP 2323)
gsh() { printf '%s\n' "$1" | ip netns exec rnic-peers timeout 10 nc -N "$guest_ip" 2323; }
# attach: put rnic's tap on the peers' bridge once DPDK has made it
attach() {
	for _ in $(seq 100); do
		ip -n rnic-peers link show "$tap" >/dev/null 2>&1 && break
		sleep 0.1
	done
	ip -n rnic-peers link set "$tap" master peerbr0 up
}
# guest_bg NAME CMD: CMD in the guest's background; its output, then a line
# rc=STATUS, go to the guest's /tmp/NAME.log (no descriptor held open, so
# the shell's connection closes at once)
guest_bg() {
	gsh "($2 >/tmp/$1.log 2>&1; echo rc=\$? >>/tmp/$1.log) </dev/null >/dev/null 2>&1 &"
}
# guest_result NAME SECONDS: wait at most SECONDS for the guest's run NAME
# to end, copy its log to $work/guest-NAME.log; true when it exited 0
guest_result() {
	for _ in $(seq "$2"); do
		gsh "cat /tmp/$1.log" >"$work/guest-$1.log" 2>/dev/null
		grep -q "^rc=" "$work/guest-$1.log" && break
		sleep 1
	done
	grep -q "^rc=0" "$work/guest-$1.log"
}
