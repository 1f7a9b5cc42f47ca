#!/usr/bin/env bash
# Makes the captures of demo traffic in this directory (see README.md here).
# Run as root (capturing on lo needs it) from anywhere:
#
#   bash pcapng/testdata/captures/make.sh
#
# It starts `querylens demo` on loopback, captures with each tool in turn
# while `querylens query` asks every demo server that answers (the silent
# and slow ones are left out, so a capture takes seconds), and writes:
#   demo-tcpdump.pcap     tcpdump -i lo (pcap, Ethernet link type)
#   demo-tcpdump-any.pcap tcpdump -i any (pcap, Linux cooked v2 link type)
#   demo-dumpcap.pcapng   dumpcap -i lo (pcapng, Ethernet link type)
# Only the demo's ports are captured (a capture filter), so other programs'
# loopback traffic stays out of the files.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
tmp=$(mktemp -d)
trap 'kill "$demo" 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/querylens" ./cmd/querylens
ql=$tmp/querylens
# The demo's Zandronum master lists 2 servers; every other protocol's
# servers come up too, each on a free loopback port.
"$ql" demo --servers 2 --master-addr 127.0.0.1:15399 >"$tmp/targets" &
demo=$!
for _ in $(seq 50); do grep -q gamespy3 "$tmp/targets" 2>/dev/null && break; sleep 0.2; done
grep -v -e '(silent)' -e '(slow)' -e '(flapping)' "$tmp/targets" >"$tmp/asked"
ports=$(awk '{split($2, a, ":"); print a[2]}' "$tmp/asked" | sort -u | sed 's/^/port /' | paste -sd' ' | sed 's/ port/ or port/g')
filter="udp and ($ports)"
ask() {
  "$ql" master -p zandronum 127.0.0.1:15399 >/dev/null
  while read -r proto addr rest; do
    [ "$proto" = zandronum-master ] && continue
    opts=$(grep -oE -- '-o [a-z_]+=[^ ]+' <<<"$rest" || true)
    # shellcheck disable=SC2086 # opts is a list of flags
    "$ql" query -p "$proto" $opts --timeout 1s --retries 0 "$addr" >/dev/null || true
  done <"$tmp/asked"
}
# capture NAME TOOL ARGS...: runs TOOL ARGS (writing $tmp/NAME) around one
# round of queries, then stops it with SIGINT and keeps the file.
capture() {
  local name=$1 pid
  shift
  "$@" &
  pid=$!
  sleep 2 # the tool opens the interface and sets the filter
  ask
  sleep 1
  kill -INT "$pid"
  wait "$pid" || true
  cp "$tmp/$name" "$here/$name"
  chmod 644 "$here/$name"
}
capture demo-tcpdump.pcap timeout 60 tcpdump -i lo -U -s 262144 -w "$tmp/demo-tcpdump.pcap" "$filter"
capture demo-tcpdump-any.pcap timeout 60 tcpdump -i any -U -s 262144 -w "$tmp/demo-tcpdump-any.pcap" "$filter"
capture demo-dumpcap.pcapng timeout 60 dumpcap -q -i lo -f "$filter" -w "$tmp/demo-dumpcap.pcapng"
ls -l "$here"/demo-*
