#!/usr/bin/env bash
# Resolves Apache Kafka's jars (server, tools, shell, logging) from Maven Central into
# interop/.kafka/<version>/lib, once per version, and prints that lib directory.
# Usage: interop/kafka/fetch.sh [VERSION]   (default: $KAFKA_VERSION or 4.1.2)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
version=${1:-${KAFKA_VERSION:-4.1.2}}
lib="$here/../.kafka/$version/lib"
if [ ! -f "$lib/.complete" ]; then
  mkdir -p "$lib"
  if ! mvn -B -q -f "$here/pom.xml" package -Dkafka.version="$version" -Dlib.dir="$lib" >&2; then
    # Versions without a kafka-shell artifact (4.4+): server and tools only.
    echo "fetch.sh: retrying $version without kafka-shell" >&2
    mvn -B -q -f "$here/pom.xml" package -Dkafka.version="$version" -Dlib.dir="$lib" -Dkafka.noshell=true >&2
  fi
  touch "$lib/.complete"
fi
cd "$lib" && pwd
