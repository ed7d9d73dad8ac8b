#!/bin/sh
# Stops ferrokraft nodes the way Kafka's bin/kafka-server-stop.sh stops Kafka servers: SIGTERM
# (or $SIGNAL) to every `ferrokraft start` process, or only to those whose properties file
# says the --process-role or --node-id asked for. A node shuts down gracefully on SIGTERM
# (a leader resigns first).
#   kafka-server-stop.sh [--process-role=controller|--node-id=N]
SIGNAL=${SIGNAL:-TERM}
role=
node=
for arg in "$@"; do
  case $arg in
    --process-role=*) role=${arg#--process-role=} ;;
    --node-id=*) node=${arg#--node-id=} ;;
    *) echo "Unknown argument $arg"; exit 1 ;;
  esac
done

# The value of `key` in the properties file a node was started with (its first argument
# after `start` that is not an option), read from /proc.
property() {
  pid=$1
  key=$2
  file=$(tr '\0' '\n' < "/proc/$pid/cmdline" | awk 'seen && $0 !~ /^-/ && prev != "--override" && prev != "--mounted-configs-dir" { print; exit } $0 == "start" { seen = 1 } { prev = $0 }')
  [ -z "$file" ] && return
  case $file in
    /*) ;;
    *) file=/proc/$pid/cwd/$file ;;
  esac
  sed -n "s/^$key=//p" "$file" | head -n 1
}

stopped=0
for pid in $(ps ax -o pid= -o args= | awk '$2 ~ /(^|\/)ferrokraft$/ && $3 == "start" { print $1 }'); do
  if [ -n "$node" ] && [ "$(property "$pid" node.id)" != "$node" ]; then
    continue
  fi
  if [ -n "$role" ] && [ "$role" != controller ]; then
    continue
  fi
  kill -s "$SIGNAL" "$pid" && stopped=$((stopped + 1))
done
if [ "$stopped" -eq 0 ]; then
  echo "No kafka server to stop"
  exit 1
fi
