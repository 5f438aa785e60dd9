#!/usr/bin/env bash
# What the build and tests need beyond the .NET SDK, each tool checked on its own and only its Debian package installed
# when it is missing, one package per apt-get call: a machine that already has Node from another source (nodesource's
# nodejs ships its own npm, which Debian's npm conflicts with) gets Chromium alone. A failed install stops here naming
# the package and apt's own message. Sourced by .ci/run; CiInstallTests runs it against a stub apt-get.
# CHROMIUM: where Chromium is looked for (default /usr/bin/chromium, where Debian's package puts it).

ci_apt_updated=0
ci_install_pkg() {
  local pkg=$1 out
  if ((!ci_apt_updated)); then
    out=$(apt-get update -qq 2>&1) || { echo "ci: apt-get update failed:" >&2; echo "$out" >&2; exit 1; }
    ci_apt_updated=1
  fi
  echo "ci: installing $pkg" >&2
  # No recommended packages: Chromium's and libclang's alone pull in hundreds (desktop, GTK and LLVM extras) that
  # neither the build nor the headless browser test uses, minutes of a fresh machine's CI time.
  if ! out=$(DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" 2>&1); then
    echo "ci: apt-get install $pkg failed:" >&2; echo "$out" >&2; exit 1
  fi
}

ci_need() { # ci_need <command or absolute path> <Debian package>
  if [[ $1 == /* ]]; then [[ -x $1 ]] && return 0; else command -v "$1" >/dev/null && return 0; fi
  ci_install_pkg "$2"
}

# What the build needs: bindgen's libclang, for the native iceoryx2 binding. First, so the build can start beside the rest.
ci_install_build_tools() {
  if [[ -d native ]] && ! dpkg -s libclang-dev >/dev/null 2>&1; then ci_install_pkg libclang-dev; fi
}

# What only the tests need.
ci_install_test_tools() {
  # Prometheus and promtool: the dashboard and deployment tests.
  ci_need prometheus prometheus
  ci_need promtool prometheus
  # jq runs README's grpcurl examples as written; script (util-linux) gives run a terminal.
  ci_need jq jq
  ci_need script bsdutils
  # The HTML report's browser test: Debian's Chromium (never a browser download) driven by playwright-core. Node and
  # npm only where there is none: Debian's npm only beside Debian's nodejs.
  ci_need "${CHROMIUM:-/usr/bin/chromium}" chromium
  ci_need node nodejs
  ci_need npm npm
}

ci_install_tools() {
  ci_install_build_tools
  ci_install_test_tools
}
