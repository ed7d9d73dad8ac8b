#!/usr/bin/env bash
# Runs the per-release scenarios of docs/interop.md ("Releases × scenarios") against one or
# more Kafka releases and prints one markdown row per release with pass/fail and seconds.
# Outside CI (CI runs the pinned 4.1.2 only). Each release takes 10-20 minutes on two cores.
# Usage: tools/interop/release-matrix.sh [VERSION ...]   (default: 4.0.2 4.1.2 4.2.2 4.3.2 4.4.0)
# Logs: target/release-matrix/<version>-<scenario>.log
set -uo pipefail
cd "$(dirname "$0")/../.."
versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(4.0.2 4.1.2 4.2.2 4.3.2 4.4.0)
logs=target/release-matrix
mkdir -p "$logs"

# scenario name | cargo test arguments (the test binary and the test name filter)
scenarios=(
  "tools-static|--test tool_parity static_quorum_tools_show_the_same"
  "tools-dynamic|--test tool_parity dynamic_quorum_tools_show_the_same"
  "tools-mixed|--test tool_parity mixed_quorum_tools_show_the_same"
  "brokers|--test interop_brokers brokers_keep_every_acked_message"
  "rolling|--test interop_brokers controllers_are_replaced_one_by_one"
  "admin-differential|--test interop_differential"
  "describe-broker|--test interop_describe_static"
)

echo "| Release | $(for s in "${scenarios[@]}"; do printf '%s | ' "${s%%|*}"; done)"
echo "|---|$(for _ in "${scenarios[@]}"; do printf -- '---|'; done)"
for v in "${versions[@]}"; do
  bash interop/kafka/fetch.sh "$v" >/dev/null || { echo "| $v | fetch failed |"; continue; }
  row="| $v |"
  for s in "${scenarios[@]}"; do
    name=${s%%|*}
    read -r -a args <<<"${s#*|}"
    start=$(date +%s)
    # Brokers run on a directory each release's own kafka-storage formatted with its
    # defaults (KAFKA_DEFAULT_FORMAT=1), the way an operator's cluster was made.
    if KAFKA_VERSION=$v KAFKA_DEFAULT_FORMAT=1 cargo test "${args[@]}" -- --test-threads 1 \
      >"$logs/$v-$name.log" 2>&1; then
      result=pass
    else
      result=FAIL
    fi
    row="$row $result ($(($(date +%s) - start)) s) |"
  done
  echo "$row"
done
