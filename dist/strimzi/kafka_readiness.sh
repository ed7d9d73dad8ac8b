#!/usr/bin/env bash
# Strimzi's readiness probe (/opt/kafka/kafka_readiness.sh). A controller-only node is ready
# when ferrokraft's /ready answers 200: it knows the quorum's leader and high watermark, a
# stronger check than Strimzi's "port 9090 listens", so a rolling restart moves on only
# while the quorum is whole. Any other node goes to Strimzi's check.
set -e
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ferrokraft_common.sh"

test -f "$STRIMZI_PROPERTIES"
if ! controller_only "$STRIMZI_PROPERTIES"; then
  exec "$here/kafka_readiness_strimzi.sh" "$@"
fi

curl --fail --silent --output /dev/null --max-time 5 "http://127.0.0.1:${FERROKRAFT_METRICS_PORT}/ready"
