#!/usr/bin/env bash
# tests/packaging/deb_test.sh - `make deb` on the built tree, then the packages it made
# (R-OPS-1, issue 43): lintian shows no error; they install with dpkg into an empty root
# directory, maintainer scripts included (the machine's own /usr and accounts are left
# alone); every file is where Debian puts it; the installed `sluice --version` runs; every
# man page renders (nested commands too); the default cluster.yaml starts a controller; the two
# systemd units are packaged and pass `systemd-analyze verify`.
# Part of `make test`, after the suites, on their build/. The install steps need root
# (dpkg --root); without it they are skipped, and said so.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/common.sh

DEB_DIR=build/deb
WORK=$(mktemp -d)
SERVER_PID=()
cleanup() { stop_pids 5 "${SERVER_PID[@]}"; rm -rf "$WORK"; }
trap cleanup EXIT

step() { log "deb_test: $*"; }
fail() { die "FAIL: $*"; }

# 1. The packages, from the state where there are none.
step "make deb"
rm -rf "$DEB_DIR"
if ! make --no-print-directory deb >"$WORK/build.log" 2>&1; then
  tail -40 "$WORK/build.log" >&2
  fail "make deb (its log above)"
fi
version=$(dpkg-parsechangelog -S Version)
project_version=$(sed -n 's/^project(sluice VERSION \([0-9.]*\) .*/\1/p' CMakeLists.txt)
[ "$version" = "$project_version" ] ||
  fail "debian/changelog says $version, CMakeLists.txt $project_version"
packages=(sluice sluice-server sluice-agent sluice-compat libsluice-drmaa1 libsluice-drmaa-dev)
debs=()
for p in "${packages[@]}"; do
  deb=$(ls "$DEB_DIR/${p}_${version}_"*.deb 2>/dev/null) || fail "no package $p in $DEB_DIR"
  debs+=("$deb")
done

# 2. lintian: warnings are reported, errors fail.
step "lintian"
lintian --fail-on error "$DEB_DIR/sluice.changes" \
  >"$WORK/lintian.txt" 2>&1 || { cat "$WORK/lintian.txt" >&2; fail "lintian"; }
! grep '^E:' "$WORK/lintian.txt" || fail "lintian errors"
echo "lintian: no errors, $(grep -c '^W:' "$WORK/lintian.txt" || true) warnings"

# 3. Their dependencies resolve on this machine: apt's simulation of `apt install ./*.deb`
# (changes nothing).
step "apt-get install --simulate"
apt-get install --simulate --no-install-recommends "${debs[@]/#/./}" >"$WORK/apt.txt" 2>&1 ||
  { cat "$WORK/apt.txt" >&2; fail "apt-get install --simulate"; }

if [ "$(id -u)" -ne 0 ]; then
  echo "deb_test: ok; install steps skipped (dpkg --root needs root)"
  exit 0
fi

# 4. Installed with dpkg into an empty root: its own database, maintainer scripts run outside
# a chroot with DPKG_ROOT set, which debhelper's snippets (systemd-sysusers, tmpfiles,
# deb-systemd-helper) honour. Dependencies are the real system's, hence --force-depends.
root=$WORK/root
step "dpkg --root=$root -i"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
dpkg --root="$root" --force-depends --force-script-chrootless --log=/dev/null \
  -i "${debs[@]}" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg -i"; }
for p in "${packages[@]}"; do
  dpkg-query --root="$root" -W -f='${Status}\n' "$p" | grep -qx 'install ok installed' ||
    fail "$p is not installed"
done

# 5. Files where Debian puts them, in the package of their role.
step "files"
owner() { dpkg-query --root="$root" -S "$1" 2>/dev/null | cut -d: -f1; }
expect_in() {  # expect_in PACKAGE PATH: PATH exists in the root and belongs to PACKAGE.
  [ -e "$root$2" ] || fail "$2 missing"
  [ "$(owner "$2")" = "$1" ] || fail "$2 is in '$(owner "$2")', not $1"
}
expect_in sluice /usr/bin/sluice
expect_in sluice /usr/bin/sluice-full
expect_in sluice-server /etc/sluice/cluster.yaml
expect_in sluice-server /usr/lib/sysusers.d/sluice-server.conf
expect_in sluice-server /usr/lib/tmpfiles.d/sluice-server.conf
expect_in libsluice-drmaa1 /usr/lib/libsluice-drmaa.so.1
expect_in libsluice-drmaa-dev /usr/lib/libsluice-drmaa.so
expect_in libsluice-drmaa-dev /usr/include/sluice/drmaa.h
dpkg-query --root="$root" -W -f='${Conffiles}\n' sluice-server |
  grep -q '^ /etc/sluice/cluster.yaml ' || fail "/etc/sluice/cluster.yaml is not a conffile"
mapfile -t compat_names < <(ls build/compat)
[ ${#compat_names[@]} -gt 0 ] || fail "build/compat has no drop-in names"
for name in "${compat_names[@]}"; do
  expect_in sluice-compat "/usr/bin/$name"
  [ "$(readlink "$root/usr/bin/$name")" = sluice ] || fail "/usr/bin/$name is not a link to sluice"
done
# The postinst's account and state directory (systemd-sysusers and systemd-tmpfiles --root).
uid=$(awk -F: '$1 == "sluice" { print $3 }' "$root/etc/passwd")
[ -n "$uid" ] || fail "postinst made no sluice account"
# /var/lib/sluice stays root's (an agent's journal is beside the controller's state).
[ "$(stat -c '%u %a' "$root/var/lib/sluice")" = "0 755" ] ||
  fail "/var/lib/sluice is $(stat -c '%u %a' "$root/var/lib/sluice"), not 0 755"
[ "$(stat -c '%u %a' "$root/var/lib/sluice/server")" = "$uid 750" ] ||
  fail "/var/lib/sluice/server is $(stat -c '%u %a' "$root/var/lib/sluice/server"), not $uid 750"
[ "$(awk -F: '$1 == "sluice" { print $6 }' "$root/etc/passwd")" = /var/lib/sluice/server ] ||
  fail "the sluice account's home is not /var/lib/sluice/server"
# The units packaging/systemd holds, each in its role's package and enabled by its postinst;
# systemd-analyze checks them in the root, beside this machine's units they may name (its
# warnings, as an unknown key, fail too).
mkdir -p "$root/lib/systemd/system" && cp -rn /lib/systemd/system/. "$root/lib/systemd/system/"
units=0
for unit in packaging/systemd/sluice-server.service packaging/systemd/sluice-agent.service; do
  [ -f "$unit" ] || fail "$unit is missing"
  name=$(basename "$unit")
  expect_in "${name%.service}" "/lib/systemd/system/$name"
  grep -q "deb-systemd-helper.*$name" "$root/var/lib/dpkg/info/${name%.service}.postinst" ||
    fail "the postinst of ${name%.service} does not enable $name"
  # The base system's commands the unit names (ExecReload's /bin/kill) are not in the root.
  for cmd in $(sed -n 's/^Exec[A-Za-z]*=[-@+!:]*\(\/[^ ]*\).*/\1/p' "$root/lib/systemd/system/$name"); do
    [ -e "$root$cmd" ] || [ ! -e "$cmd" ] || install -D "$cmd" "$root$cmd"
  done
  if ! systemd-analyze verify --root="$root" "/lib/systemd/system/$name" >"$WORK/verify.txt" 2>&1 ||
    [ -s "$WORK/verify.txt" ]; then
    cat "$WORK/verify.txt" >&2
    fail "systemd-analyze verify $name"
  fi
  units=$((units + 1))
done
[ "$units" -eq 2 ] || fail "$units units checked, not 2"
echo "units: $units packaged and verified"

# 6. The installed commands run: `sluice` itself, and sluice-full beside it for --help.
step "sluice --version"
[ "$("$root/usr/bin/sluice" --version)" = "sluice $version" ] ||
  fail "sluice --version: $("$root/usr/bin/sluice" --version)"
"$root/usr/bin/sluice" --help >"$WORK/help.txt" || fail "sluice --help"

# 7. A man page for every command: sluice, each verb `sluice --help` lists, sluice-full and the
# drop-in names; each renders without a groff warning.
step "man pages"
man1=$root/usr/share/man/man1
verbs=$(sed -n '/^Subcommands:/,$p' "$WORK/help.txt" | sed -n 's/^  \([a-z-]*\)  .*/\1/p')
[ -n "$verbs" ] || fail "sluice --help lists no verbs"
pages=(sluice sluice-full "${compat_names[@]}")
for verb in $verbs; do
  pages+=("sluice-$verb")
  # Commands nested in a verb (`rsv add`) have pages of their own.
  for sub in $("$root/usr/bin/sluice" "$verb" --help | sed -n '/^Subcommands:/,$p' |
    sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
    pages+=("sluice-$verb-$sub")
  done
done
for page in "${pages[@]}"; do
  [ -e "$man1/$page.1.gz" ] || fail "no man page $page(1)"
  warnings=$(MANWIDTH=100 man --warnings -l "$man1/$page.1.gz" 2>&1 >/dev/null)
  [ -z "$warnings" ] || fail "man $page: $warnings"
done
MANWIDTH=100 man -l "$man1/sluice-submit.1.gz" >"$WORK/submit.txt"
grep -q -- '--queue' "$WORK/submit.txt" || fail "man sluice-submit lacks --queue"
MANWIDTH=100 man -l "$man1/sluice-rsv-add.1.gz" >"$WORK/rsv-add.txt"
grep -q -- '--maint' "$WORK/rsv-add.txt" || fail "man sluice-rsv-add lacks --maint"
echo "man pages: ${#pages[@]} render"

# 8. The default cluster.yaml starts a controller (bounded; stopped by PID).
step "sluice server --config /etc/sluice/cluster.yaml"
"$root/usr/bin/sluice" server --config "$root/etc/sluice/cluster.yaml" --state "$WORK/state" \
  --listen 127.0.0.1:0 >"$WORK/server.out" 2>"$WORK/server.err" &
SERVER_PID=($!)
poll_until 30 0.1 grep -q '^listening on ' "$WORK/server.out" ||
  { cat "$WORK/server.err" >&2; fail "the default configuration does not start a controller"; }
stop_pids 5 "${SERVER_PID[@]}"
SERVER_PID=()

# 9. Purge: the configuration and each role's state go with its package, and only its own:
# purging the controller keeps a journal the agent of the same host wrote (as its unit's
# StateDirectory makes it).
step "dpkg --purge"
purge() {
  dpkg --root="$root" --force-depends --force-script-chrootless --log=/dev/null \
    --purge "$@" >"$WORK/dpkg.log" 2>&1 || { cat "$WORK/dpkg.log" >&2; fail "dpkg --purge $*"; }
}
install -d -m 700 "$root/var/lib/sluice/agent" && echo journal >"$root/var/lib/sluice/agent/journal"
echo state >"$root/var/lib/sluice/server/sluice.db"
purge sluice-server
[ ! -e "$root/var/lib/sluice/server" ] || fail "/var/lib/sluice/server is left after purge"
[ -f "$root/var/lib/sluice/agent/journal" ] || fail "purging sluice-server deleted the agent's journal"
rest=()
for p in "${packages[@]}"; do [ "$p" = sluice-server ] || rest+=("$p"); done
purge "${rest[@]}"
for gone in /etc/sluice /var/lib/sluice /usr/bin/sluice; do
  [ ! -e "$root$gone" ] || fail "$gone is left after purge"
done
echo "deb_test: ok"
