#!/bin/sh
# Regenerates src/controller/configs/broker_static_table.rs from every Kafka release ferrokraft
# presents (their jars fetched by interop/kafka/fetch.sh):
#   tools/dev/broker-configs/gen.sh [VERSION ...]   (default: 4.0.2 4.1.2 4.2.2 4.3.2 4.4.0)
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
[ $# -eq 0 ] && set -- 4.0.2 4.1.2 4.2.2 4.3.2 4.4.0
out=$root/src/controller/configs/broker_static_table.rs
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
facts=""
for v in "$@"; do
  lib=$(bash "$root/interop/kafka/fetch.sh" "$v")
  mkdir -p "$build/$v"
  javac -d "$build/$v" -cp "$lib/*" "$root/tools/dev/broker-configs/BrokerConfigFacts.java"
  java -cp "$build/$v:$lib/*" BrokerConfigFacts "$v" > "$build/$v.facts"
  facts="$facts $build/$v.facts"
done
# shellcheck disable=SC2086
python3 "$root/tools/dev/broker-configs/gen.py" "$out.tmp" $facts
mv "$out.tmp" "$out"
rustfmt --edition 2021 "$out"
echo "wrote $out ($(grep -c 'StaticKey {' "$out") rows)"
