#!/bin/sh
# Starts ferrokraft the way Kafka's bin/kafka-server-start.sh starts a Kafka server, so scripts
# and Ansible roles written for Kafka controllers work by changing the install path:
#   kafka-server-start.sh [-daemon] server.properties [--override property=value]*
# -daemon runs it in the background with its output in $LOG_DIR/kafkaServer.out
# (LOG_DIR defaults to logs/ beside bin/). KAFKA_HEAP_OPTS, KAFKA_OPTS and the other JVM
# variables mean nothing to ferrokraft and are ignored.
if [ $# -lt 1 ]; then
  echo "USAGE: $0 [-daemon] server.properties [--override property=value]*"
  exit 1
fi
base_dir=$(cd "$(dirname "$0")" && pwd)
if [ "$1" = "-daemon" ]; then
  shift
  LOG_DIR=${LOG_DIR:-$base_dir/../logs}
  mkdir -p "$LOG_DIR"
  nohup "$base_dir/ferrokraft" start "$@" > "$LOG_DIR/kafkaServer.out" 2>&1 < /dev/null &
  exit 0
fi
exec "$base_dir/ferrokraft" start "$@"
