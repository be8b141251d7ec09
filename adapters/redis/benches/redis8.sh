#!/usr/bin/env bash
# Redis 8.6 for the tests and the Redis bench, on a machine whose own redis-server is older,
# without touching the system's packages: Debian experimental's redis-server 8.6.3 and the
# newer C and C++ runtimes it needs (from sid), unpacked under target/redis8/ and run
# through their own loader. Prints the folder of `redis-server` and `redis-cli` wrappers to
# put first on PATH:
#
#   PATH=$(bash adapters/redis/benches/redis8.sh):$PATH CI=true cargo test -p tally-redis
#   REDIS8=1 bash adapters/redis/benches/report.sh      # runs this script itself
#
# Every package is pinned; a second run reuses what the first unpacked. When the registry
# no longer has a pinned version, the script says which and stops: pick the current ones
# (`apt-cache -o Dir::Etc::sourcelist=target/redis8/sources.list ... policy NAME`, or
# https://packages.debian.org) and change the list below.
set -euo pipefail
cd "$(dirname "$0")/../../.."
target=${CARGO_TARGET_DIR:-$PWD/target}
dir=$target/redis8
redis_version=5:8.6.3-1
# name=version, from experimental (redis) and sid (what redis's binary links against:
# glibc >= 2.38 and a newer libstdc++ than Debian 12 has).
packages=(
  "redis-server=$redis_version"
  "redis-tools=$redis_version"
  libc6=2.43-7
  libstdc++6=16.2.0-4
  libgcc-s1=16.2.0-4
  libatomic1=16.2.0-4
  libssl3t64=3.6.5-1
  libsystemd0=262.1-1
  libjemalloc2=5.3.1-2
  liblzf1=3.6-4+b4
)
stamp=$dir/unpacked-$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-16)
bin=$dir/bin
lib=$dir/root/usr/lib/x86_64-linux-gnu

if [[ ! -f $stamp ]]; then
  [[ $(uname -m) == x86_64 ]] || { echo "redis8.sh: only for x86_64 (this is $(uname -m))" >&2; exit 2; }
  command -v apt-get >/dev/null && command -v dpkg >/dev/null ||
    { echo "redis8.sh: needs apt-get and dpkg (Debian or Ubuntu)" >&2; exit 2; }
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [[ -f $keyring ]] || { echo "redis8.sh: no $keyring (apt-get install debian-archive-keyring)" >&2; exit 2; }
  rm -rf "$dir"
  mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial" "$dir/debs"
  {
    echo "deb [signed-by=$keyring] http://deb.debian.org/debian experimental main"
    echo "deb [signed-by=$keyring] http://deb.debian.org/debian sid main"
  } > "$dir/sources.list"
  # Only these files: the system's sources, lists and cache are left alone.
  apt=(-o "Dir::Etc::sourcelist=$dir/sources.list" -o "Dir::Etc::sourceparts=-"
    -o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache")
  echo "redis8.sh: the package lists of Debian experimental and sid" >&2
  apt-get update "${apt[@]}" >&2 ||
    { echo "redis8.sh: apt-get update failed (is deb.debian.org reachable?)" >&2; exit 1; }
  missing=()
  for p in "${packages[@]}"; do
    name=${p%%=*} version=${p#*=}
    apt-cache "${apt[@]}" show "$name=$version" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "redis8.sh: the registry no longer has: ${missing[*]}" >&2
    for p in "${missing[@]}"; do
      name=${p%%=*}
      echo "  $name now: $(apt-cache "${apt[@]}" policy "$name" 2>/dev/null | awk '/Candidate:/ { print $2 }')" >&2
    done
    echo "redis8.sh: change the pinned versions in $0" >&2
    exit 1
  fi
  # apt-get download checks every file against the signed package lists.
  (cd "$dir/debs" && apt-get download "${apt[@]}" "${packages[@]}" >&2)
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  mkdir -p "$bin"
  for tool in redis-server redis-cli; do
    # redis-server is a link to redis-check-rdb, which acts on the name it was run by.
    # Libraries the packages do not bring (zlib, zstd) come from the system.
    cat > "$bin/$tool" <<EOF
#!/bin/sh
exec "$lib/ld-linux-x86-64.so.2" --library-path "$lib:/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu" "$dir/root/usr/bin/$tool" "\$@"
EOF
    chmod +x "$bin/$tool"
  done
  touch "$stamp"
fi

version=$("$bin/redis-server" --version) ||
  { echo "redis8.sh: $bin/redis-server does not run; remove $dir and run again" >&2; exit 1; }
case $version in
  *v=8.6.3*) ;;
  *) echo "redis8.sh: $bin/redis-server says: $version" >&2; exit 1 ;;
esac
echo "redis8.sh: $version" >&2
echo "$bin"
