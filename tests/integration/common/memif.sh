# Shared by the memif tests (source it). wait_memif_listen SOCKET PID: wait
# (at most 20 s) until a memif server listens on SOCKET, the path given to
# the PMD's socket= key: in the abstract namespace (socket-abstract=yes,
# the default: /proc/net/unix lists it as @SOCKET) or as a file. Returns
# early if PID exits. A client started before its server listens fails to
# start; a fixed sleep lost that race on a loaded machine.
wait_memif_listen() {
	local i
	for i in $(seq 200); do
		[ -S "$1" ] && return 0
		grep -qF " @$1" /proc/net/unix 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
