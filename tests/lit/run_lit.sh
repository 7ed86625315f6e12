#!/usr/bin/env bash
# A minimal lit: runs the `RUN:` lines of a test file with substitutions
#   %aotc -> the aotc binary   %s -> the test file   %t -> a fresh temp path
#   %models -> tests/models    %S -> the test file's directory
#   %crun -> examples/run_model.c built (a C host that dlopens a model)
#   FileCheck / not / count -> LLVM 14's tools
# Every RUN line must exit 0 (pipefail on).
# Usage: run_lit.sh AOTC TESTFILE [C_EXAMPLE]
set -u
aotc=$1; test=$2; crun=${3:-}
llvm=/usr/lib/llvm-14/bin
dir=$(cd "$(dirname "$test")" && pwd)
models=$(cd "$dir/../models" && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
n=0
while IFS= read -r line; do
  case "$line" in *"RUN:"*) ;; *) continue ;; esac
  cmd=${line#*RUN:}
  cmd=${cmd//%aotc/$aotc}; cmd=${cmd//%crun/$crun}; cmd=${cmd//%models/$models}; cmd=${cmd//%s/$test}
  cmd=${cmd//%S/$dir}; cmd=${cmd//%t/$tmp/t}
  cmd=${cmd//FileCheck /$llvm/FileCheck }; cmd=${cmd//not /$llvm/not }; cmd=${cmd//count /$llvm/count }
  n=$((n+1))
  if ! bash -o pipefail -c "$cmd"; then
    echo "FAILED RUN line $n of $test:"; echo "  $cmd"; exit 1
  fi
done < "$test"
[ "$n" -gt 0 ] || { echo "no RUN lines in $test"; exit 1; }
echo "ok: $n RUN lines"
