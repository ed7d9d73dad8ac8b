#!/bin/sh
# Lays out the container image's file system under OUT: the ferrokraft binary, the shared
# libraries it links (as ldd lists them; nothing else), a user and group `appuser` (uid/gid
# 1000, as the apache/kafka image runs), and the writable directories a controller uses
# (/var/lib/kafka/data, the image's volume; /tmp, where Kafka's default log.dirs points).
# Both Containerfile (its build stage) and build-local.sh call it, so the two images match.
#   dist/container/rootfs.sh BINARY OUT
set -eu
binary=$1
out=$2
mkdir -p "$out/etc" "$out/tmp" "$out/var/lib/kafka/data" "$out/mnt/shared/config"
cp "$binary" "$out/ferrokraft"
chmod 755 "$out/ferrokraft"
strip "$out/ferrokraft" 2>/dev/null || true
# Each library at the path the dynamic loader looks for it.
ldd "$binary" | awk '/=> \// { print $3 } /^\t\/[^ ]+ \(/ { print $1 }' | while read -r lib; do
  mkdir -p "$out$(dirname "$lib")"
  cp -L "$lib" "$out$lib"
done
printf 'root:x:0:0:root:/:/sbin/nologin\nappuser:x:1000:1000:appuser:/tmp:/sbin/nologin\n' > "$out/etc/passwd"
printf 'root:x:0:\nappuser:x:1000:\n' > "$out/etc/group"
# Host names (voters such as controller-1) resolve through the files and DNS built into
# glibc; say so explicitly rather than rely on the default.
printf 'hosts: files dns\n' > "$out/etc/nsswitch.conf"
chmod 1777 "$out/tmp"
chown -R 1000:1000 "$out/var/lib/kafka/data" 2>/dev/null || true
chmod 777 "$out/var/lib/kafka/data"
