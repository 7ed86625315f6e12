# Writes the bytes of INPUT as a C++ char array named SYMBOL into OUTPUT.
# Usage: cmake -DINPUT=file -DOUTPUT=file.inc -DSYMBOL=name -P embed_file.cmake
if(NOT INPUT OR NOT OUTPUT OR NOT SYMBOL)
  message(FATAL_ERROR "embed_file.cmake: INPUT, OUTPUT and SYMBOL are required")
endif()
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hexLength)
math(EXPR size "${hexLength} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${hex}")
# 16 bytes per line keeps the file readable and diffs small.
string(REPEAT "'[^']+'," 16 sixteen)
string(REGEX REPLACE "(${sixteen})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by embed_file.cmake. Do not edit.\n"
  "static const char ${SYMBOL}[${size} + 1] = {\n${bytes}'\\0'};\n"
  "static const unsigned long long ${SYMBOL}Size = ${size};\n")
