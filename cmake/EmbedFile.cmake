# cmake -DIN=file -DOUT=file.cpp -DNAME=symbol -P EmbedFile.cmake
# Writes a C++ file defining `extern const unsigned char NAME[]` and `extern const size_t NAME_size`
# with the bytes of IN.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" len)
math(EXPR size "${len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "// Generated from ${IN} by cmake/EmbedFile.cmake.\n#include <cstddef>\n"
     "extern const unsigned char ${NAME}[];\nextern const size_t ${NAME}_size;\n"
     "alignas(8) const unsigned char ${NAME}[] = {\n${bytes}0};\nconst size_t ${NAME}_size = ${size};\n")
