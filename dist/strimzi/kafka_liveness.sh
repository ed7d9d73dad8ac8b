#!/usr/bin/env bash
# Strimzi's liveness probe (/opt/kafka/kafka_liveness.sh): alive while the server process
# runs. A controller-only node is alive while a ferrokraft process started on this pod's
# /tmp/strimzi.properties runs; any other node goes to Strimzi's check (a java process).
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ferrokraft_common.sh"

if ! controller_only "$CUSTOM_CONFIG/server.config"; then
  exec "$here/kafka_liveness_strimzi.sh" "$@"
fi

for proc in /proc/[0-9]*; do
  exe=$(readlink "$proc/exe" 2>/dev/null || true)
  if [[ "${exe##*/}" == ferrokraft* ]] && tr '\0' '\n' < "$proc/cmdline" 2>/dev/null | grep -qxF "$STRIMZI_PROPERTIES"; then
    exit 0
  fi
done
exit 1
