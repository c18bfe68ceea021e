#!/usr/bin/env bash
# Fetches QuickFIX's own FIX 4.4 data dictionary (spec/FIX44.xml from the quickfix
# source package on PyPI) into target/quickfix-spec/, where the FIX interop tests
# (crates/peregrine-fix-interop) load it so QuickFIX validates every message we send
# against its dictionary. Nothing of QuickFIX is committed. Takes ~40 s; skips if
# the file is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${CARGO_TARGET_DIR:-target}/quickfix-spec"
[ -s "$out/FIX44.xml" ] && exit 0
mkdir -p "$out"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download --quiet --no-deps --no-binary :all: quickfix==1.16.0 -d "$tmp"
tar -xzf "$tmp"/quickfix-1.16.0.tar.gz -C "$tmp" quickfix-1.16.0/spec/FIX44.xml
cp "$tmp"/quickfix-1.16.0/spec/FIX44.xml "$out/FIX44.xml"
echo "quickfix-spec: $out/FIX44.xml"
