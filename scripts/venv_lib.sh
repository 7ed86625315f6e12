# Sourced by python_env.sh, bench_env.sh and export_env.sh: a virtual
# environment made from a requirements file, remade only when the file
# changed (its SHA-256 is stamped into the venv) or the venv cannot import
# what it must.

# venv_current VENV REQ CHECK: true if VENV was made from REQ as it is now
# and its python runs CHECK.
venv_current() {
  local stamp=$1/.requirements.sha256
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(sha256sum "$2" | cut -d' ' -f1)" ] &&
    "$1/bin/python" -c "$3" 2>/dev/null
}

# venv_create VENV REQ PYTHON [PIP ARGS...]: VENV made afresh by PYTHON with
# REQ installed (pip install -r REQ PIP ARGS).
venv_create() {
  local venv=$1 req=$2 python=$3
  shift 3
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$@" -r "$req"
}

# venv_stamp VENV REQ: records that VENV is up to date with REQ.
venv_stamp() {
  sha256sum "$2" | cut -d' ' -f1 > "$1/.requirements.sha256"
}
