#!/usr/bin/env bash
# Strimzi starts every Kafka node with /opt/kafka/kafka_run.sh. This image puts this script
# there and Strimzi's own at kafka_run_strimzi.sh: controller-only node pools run ferrokraft,
# every other node runs Strimzi's script unchanged.
#
# For a controller it does what Strimzi's script does for one, in the same order and on the
# same files: empty /tmp, copy custom-config/server.config to /tmp/strimzi.properties, format
# with the cluster id and metadata version from custom-config (skipping formatted
# directories), drop a metadata log left in another data volume or else delete quorum-state,
# and exec the server under tini. JVM settings (heap, GC logging, JMX, agents) mean nothing to
# ferrokraft and are ignored.
set -e
set +x
here=$(cd "$(dirname "$0")" && pwd)
. "$here/ferrokraft_common.sh"

if ! controller_only "$CUSTOM_CONFIG/server.config"; then
  exec "$here/kafka_run_strimzi.sh" "$@"
fi

# Leftovers of an earlier start of this container (the volume outlives restarts).
rm -rfv "${POD_ROOT}"/tmp/* || true

echo "Starting ferrokraft with configuration:"
tee "$STRIMZI_PROPERTIES" < "$CUSTOM_CONFIG/server.config" \
  | sed -e 's/sasl.jaas.config=.*/sasl.jaas.config=[hidden]/g' -e 's/password=.*/password=[hidden]/g'
echo ""

NODE_ID=$(property node.id "$STRIMZI_PROPERTIES")
STRIMZI_CLUSTER_ID=$(cat "$CUSTOM_CONFIG/cluster.id")
METADATA_VERSION=$(cat "$CUSTOM_CONFIG/metadata.version")
echo "Making sure the KRaft storage is formatted with cluster ID $STRIMZI_CLUSTER_ID and metadata version $METADATA_VERSION"
# "=" keeps a cluster id that starts with "-" an argument (KAFKA-15754); -g skips formatted
# directories, so this is a no-op on every start but the first.
"$FERROKRAFT_BIN" format -t="$STRIMZI_CLUSTER_ID" -r="$METADATA_VERSION" -c="$STRIMZI_PROPERTIES" -g
echo "KRaft storage formatting is done"

# A node moved to another metadata volume gets its old metadata log removed; else quorum-state
# goes, as Strimzi does so that a changed voter set cannot clash with a remembered one
# (ferrokraft, as Kafka, rebuilds it from the log and its peers).
METADATA_LOG_DIR=$(property metadata.log.dir "$STRIMZI_PROPERTIES")
CURRENT_METADATA_LOG_DIR=$(ls -d "${POD_ROOT}"/var/lib/kafka/data-*/kafka-log"$NODE_ID"/__cluster_metadata-0 2>/dev/null | head -n 1 || true)
if [[ -n "$METADATA_LOG_DIR" && -d "$CURRENT_METADATA_LOG_DIR" && "$CURRENT_METADATA_LOG_DIR" != "$METADATA_LOG_DIR"* ]]; then
  echo "The desired KRaft metadata log directory ($METADATA_LOG_DIR) and the current one ($CURRENT_METADATA_LOG_DIR) differ. The current directory will be deleted."
  rm -rf "$CURRENT_METADATA_LOG_DIR"
elif [[ -f "$METADATA_LOG_DIR/__cluster_metadata-0/quorum-state" ]]; then
  echo "Removing quorum-state file"
  rm -f "$METADATA_LOG_DIR/__cluster_metadata-0/quorum-state"
fi

set -x
# The metrics listener serves /metrics (scraped on 9404) and /ready (the readiness probe).
command=("$FERROKRAFT_BIN" start "$STRIMZI_PROPERTIES" --override "ferrokraft.metrics.listener=0.0.0.0:${FERROKRAFT_METRICS_PORT}")
if [[ -x /usr/bin/tini ]]; then
  # As Strimzi runs Kafka: tini as PID 1 forwards SIGTERM and turns it into exit code 0 (-e 143).
  exec /usr/bin/tini -w -e 143 -- "${command[@]}"
fi
exec "${command[@]}"
