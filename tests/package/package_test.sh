#!/usr/bin/env bash
# The install tree and the Debian package, as a user gets them:
#   1. `cpack -G DEB` builds the package; `dpkg-deb -x` unpacks it into an empty folder; the
#      unpacked `kernrl` lists and shows problems from its own share/kernrl (proved by a marker
#      written into the unpacked copy) and compiles a kernel (`eval --compile-only`) with its own
#      libexec/kernrl/kernrl-nvrtc;
#   2. `cmake --install --prefix P`, then P moved elsewhere: the moved tree works the same.
#   tests/package/package_test.sh BUILD_DIR
set -u
BUILD="$(cd "$1" && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
export KERNRL_CACHE="$TMP/cache"
unset KERNRL_HOME KERNRL_PROBLEMS
fail=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; [ -f "$TMP/log" ] && sed 's/^/    /' "$TMP/log" | head -20; fail=1; }

# Runs the installed kernrl under ROOT (bin/kernrl) through list, show and a compile-only eval.
exercise() {  # exercise NAME ROOT
  local name="$1" root="$2"
  local kernrl="$root/bin/kernrl" share="$root/share/kernrl"
  [ -x "$kernrl" ] && [ -x "$root/libexec/kernrl/kernrl-nvrtc" ] && [ -f "$share/configs/default.yaml" ] \
    && ok "$name: bin, libexec and share installed" || bad "$name: layout"
  "$kernrl" list >"$TMP/log" 2>&1 && grep -q "L1_23_Softmax" "$TMP/log" && ok "$name: kernrl list" || bad "$name: kernrl list"
  # The data comes from the installed tree, not from the source tree the binary was built from.
  local yaml="$share/problems/L1/23_Softmax/problem.yaml"
  chmod u+w "$yaml"
  sed -i 's/^description: |$/description: |\n  installed-tree-marker/' "$yaml"
  "$kernrl" show L1_23_Softmax >"$TMP/log" 2>&1 && grep -q "installed-tree-marker" "$TMP/log" \
    && ok "$name: kernrl show reads the installed problems" || bad "$name: kernrl show"
  "$kernrl" eval "$share/problems/L1/23_Softmax/solution.cu" --compile-only --json >"$TMP/log" 2>&1 \
    && grep -q '"status":"compiled"' "$TMP/log" && ok "$name: kernrl eval --compile-only" || bad "$name: eval"
}

# 1. The Debian package.
cpack -G DEB -B "$TMP/pkg" --config "$BUILD/CPackConfig.cmake" >"$TMP/log" 2>&1 && ok "cpack -G DEB" || bad "cpack"
deb=$(ls "$TMP"/pkg/*.deb 2>/dev/null | head -1)
if [ -n "$deb" ]; then
  dpkg-deb -I "$deb" >"$TMP/log" 2>&1 && grep -q "^ Package: kernrl" "$TMP/log" && ok "package metadata" || bad "dpkg-deb -I"
  dpkg-deb -c "$deb" >"$TMP/contents" 2>&1; grep -q "./usr/libexec/kernrl/kernrl-nvrtc" "$TMP/contents" && ok "package holds usr/libexec/kernrl/kernrl-nvrtc" || bad "package contents"
  mkdir "$TMP/root"
  dpkg-deb -x "$deb" "$TMP/root" && exercise "deb" "$TMP/root/usr"
else
  bad "no .deb produced"
fi

# 2. cmake --install into a prefix, then the prefix moved.
cmake --install "$BUILD" --prefix "$TMP/prefix" >"$TMP/log" 2>&1 && ok "cmake --install" || bad "cmake --install"
mv "$TMP/prefix" "$TMP/moved"
exercise "moved install tree" "$TMP/moved"
exit $fail
