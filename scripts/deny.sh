#!/usr/bin/env bash
# cargo deny (deny.toml): advisories, licences, duplicate versions, sources. CI runs it
# from .ci/run. CI machines reach the package registries but not GitHub, so the RustSec
# advisory database comes from the snapshot in deny/ (its crates/ folder and the commit
# it was taken at); `scripts/deny.sh --update` refreshes that snapshot where GitHub is
# reachable (commit the two files in deny/ afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
DENY_VERSION=0.20.2
URL=https://github.com/rustsec/advisory-db
# cargo-deny's folder for that URL under deny.toml's db-path.
DB=target/advisory-dbs/advisory-db-3157b0e258782691

if [ "${1:-}" = "--update" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  git clone -q --depth 1 "$URL" "$tmp/db"
  git -C "$tmp/db" archive --format=tar.gz HEAD crates > deny/advisory-db.tar.gz
  git -C "$tmp/db" log -1 --format='%H %cI' > deny/advisory-db.commit
  echo "snapshot: $(cat deny/advisory-db.commit)"
  exit 0
fi

if ! cargo deny --version 2>/dev/null | grep -q "$DENY_VERSION"; then
  start=$(date +%s)
  cargo install --quiet --locked cargo-deny --version "$DENY_VERSION"
  echo "cargo install cargo-deny: $(( $(date +%s) - start )) s"
fi

# The snapshot as the git repository cargo-deny expects (it reads HEAD's date to judge
# staleness, so the commit carries the snapshot's own date).
read -r commit date < deny/advisory-db.commit
if [ "$(cat "$DB/.snapshot" 2>/dev/null)" != "$commit" ]; then
  rm -rf "$DB"
  mkdir -p "$DB"
  tar -xzf deny/advisory-db.tar.gz -C "$DB"
  git -C "$DB" init -q
  git -C "$DB" add -A
  GIT_AUTHOR_DATE="$date" GIT_COMMITTER_DATE="$date" \
    git -C "$DB" -c user.name=snapshot -c user.email=snapshot@localhost \
    commit -q -m "RustSec advisory-db at $commit"
  echo "$commit" > "$DB/.snapshot"
fi
echo "RustSec advisory database: snapshot of $commit ($date)"
cargo deny --offline check
