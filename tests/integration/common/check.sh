# Shared by the rnic-perf test scripts (source it after setting pass=0
# fails=0): fail NAME [OUTPUT] counts a failure and shows the output's end;
# json_num LINE FIELD prints the integer value of FIELD in a JSON line.
fail() {
	echo "FAIL: $1"
	[ -n "${2:-}" ] && echo "$2" | tail -8
	fails=$((fails + 1))
}

json_num() {
	echo "$1" | sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p"
}
