# Shell helpers shared by the scripts that start Peregrine processes (source it).

# A TCP port free on loopback right now.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits up to 10 s for a line matching $2 in file $1 (a process's "listening on").
wait_for_line() { # file pattern
  for _ in $(seq 1 200); do
    grep -q "$2" "$1" 2>/dev/null && return 0
    sleep 0.05
  done
  echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; return 1
}
