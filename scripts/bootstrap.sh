#!/usr/bin/env bash
# Installs what building weft needs on a fresh Debian machine, and nothing
# when it is all there (then it prints nothing). Idempotent.
#   scripts/bootstrap.sh          install
#   . scripts/bootstrap.sh        install, and keep NODE_PATH in this shell
# Debian's emcc cannot find its `acorn` module without NODE_PATH.
# (Strict mode only when run: sourcing must not change the caller's shell.)
[[ "${BASH_SOURCE[0]}" != "$0" ]] || set -euo pipefail

WEFT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export WEFT_ROOT
case ":${NODE_PATH:-}:" in
  *:/usr/share/nodejs:*) ;;
  *) export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}" ;;
esac

# Runs a command silently; prints everything it said only when it fails.
weft_quiet() {
  local out
  if ! out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    echo "failed: $*" >&2
    return 1
  fi
}

weft_bootstrap() {
  local pkgs=()
  command -v emcc >/dev/null 2>&1 || pkgs+=(emscripten)
  command -v wasm-opt >/dev/null 2>&1 || pkgs+=(binaryen)
  command -v cmake >/dev/null 2>&1 || pkgs+=(cmake)
  command -v make >/dev/null 2>&1 || pkgs+=(make)
  command -v gcc >/dev/null 2>&1 || pkgs+=(gcc libc6-dev)
  # the libFuzzer targets (npm run fuzz, in npm test): clang and its fuzzer runtime
  command -v clang >/dev/null 2>&1 || pkgs+=(clang)
  compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a" >/dev/null || pkgs+=(libclang-rt-dev)
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
  # browser tests drive Debian's chromium (no browser download works here)
  [ -x /usr/bin/chromium ] || pkgs+=(chromium)
  if ((${#pkgs[@]})); then
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    echo "bootstrap: installing ${pkgs[*]}" >&2
    # Another apt run may hold the lock (e.g. unattended upgrades): wait for it.
    "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=900 update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=900 \
      install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
  fi
  # devDependencies are test tools (playwright-core, typescript, vite); the
  # benchmark peers live in bench/peers/ and npm run bench installs them.
  # Not `npm ci`: the registry reachable here lacks some other-platform
  # optional packages (rollup's), so the lock cannot list them and npm ci's
  # sync check refuses it; `npm install` installs the locked versions as is.
  if [ ! -d "$WEFT_ROOT/node_modules" ] && grep -q '"node_modules/' "$WEFT_ROOT/package-lock.json"; then
    (cd "$WEFT_ROOT" && npm install --loglevel=error --no-audit --no-fund)
  fi
}

weft_bootstrap
