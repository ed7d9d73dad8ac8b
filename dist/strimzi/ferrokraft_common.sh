#!/usr/bin/env bash
# Shared by the run, liveness and readiness wrappers: where the pod's files are and which role
# this node has. Sourced, not run.
#
# FERROKRAFT_POD_ROOT (empty in the image) is prefixed to every absolute path the scripts touch
# that Strimzi mounts into the pod (/tmp, /var/lib/kafka, the service account), so that a test
# can lay a pod's filesystem out in a directory. KAFKA_HOME is Strimzi's (/opt/kafka).
POD_ROOT="${FERROKRAFT_POD_ROOT:-}"
KAFKA_HOME="${KAFKA_HOME:-/opt/kafka}"
# The custom-config volume: Strimzi's ConfigMap of the node (server.config, cluster.id,
# metadata.version, log4j2.properties, metrics-config.json).
CUSTOM_CONFIG="${KAFKA_HOME}/custom-config"
# What Strimzi's kafka_run.sh writes and its readiness probe reads; the ferrokraft run writes
# the same file so that every probe and tool finds the node's configuration where Strimzi puts it.
STRIMZI_PROPERTIES="${POD_ROOT}/tmp/strimzi.properties"
FERROKRAFT_BIN="${FERROKRAFT_BIN:-/opt/ferrokraft/bin/ferrokraft}"
# Strimzi scrapes metrics on 9404 (MetricsModel.METRICS_PORT); ferrokraft serves /metrics and
# /ready there.
FERROKRAFT_METRICS_PORT="${FERROKRAFT_METRICS_PORT:-9404}"

# The value of key $1 in properties file $2 (last one wins, as in Java).
property() {
  sed -n "s/^[[:space:]]*$1[[:space:]]*[=:][[:space:]]*//p" "$2" 2>/dev/null | tail -n 1
}

# Whether the node of properties file $1 is a controller and nothing else: those run
# ferrokraft; brokers and combined nodes run Kafka (ferrokraft has no broker role).
controller_only() {
  local roles
  roles=$(property process.roles "$1")
  [[ "$roles" == *controller* && "$roles" != *broker* ]]
}
