// The include gate (compile/include_gate.h): directives the sandbox would stop are refused early,
// however they are spelled; legitimate code passes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "compile/include_gate.h"

using namespace kernrl;

TEST_CASE("only CUDA headers may be included, however the directive is spelled") {
  CHECK(disallowed_include(
            "#include <cuda_fp16.h>\n#include \"mma.h\"\n# include <cuda/std/cstdint>\n", 1)
            .empty());
  CHECK(disallowed_include("const char* s = \"#include </etc/passwd>\"; // #include \"/x\"\n", 1)
            .empty());
  const char* bad[] = {
      "#include \"/etc/passwd\"\n",
      "#include <../../etc/passwd>\n",
      "#\\\ninclude \"/etc/passwd\"\n",           // a line continuation
      "#/**/include \"/etc/passwd\"\n",           // a comment inside the directive
      "/* x */ #include \"/etc/passwd\"\n",       // a comment before it
      "%:include \"/etc/passwd\"\n",              // the digraph
      "#define P \"/etc/passwd\"\n#include P\n",  // a macro-named header
      "#include_next <cuda_fp16.h>\n",
      "#if __has_include(\"/etc/shadow\")\n#endif\n",
  };
  for (const char* src : bad) {
    INFO(src);
    CHECK_FALSE(disallowed_include(src, 1).empty());
  }
  CHECK(disallowed_include("int x;\n\n#include \"/etc/passwd\"\n", 10).find("line 12") == 0);
}

TEST_CASE("the include scan sees through splices, raw strings and digit separators") {
  const char* bad[] = {
      "/* x *\\\n/ #include \"/etc/passwd\"\n",  // a splice inside the */ of a comment
      "%\\\n:include \"/etc/passwd\"\n",         // a splice inside the digraph
      "const char* s = \"\\\\\n\";\n#include \"/etc/passwd\"\n",  // an escaped backslash before a
                                                                  // splice
      "int n = 1'000;\n#include \"/etc/passwd\"\n",  // a digit separator is no character literal
      "auto s = R\"x(\")x\";\n#include \"/etc/passwd\"\n",  // a quote inside a raw string
      "#define P <x>\n#if __has_include(P)\n#endif\n",      // a macro-named __has_include
  };
  for (const char* src : bad) {
    INFO(src);
    CHECK_FALSE(disallowed_include(src, 1).empty());
  }
  // Legitimate code: multi-line macros, raw strings holding directive-like text, char literals.
  CHECK(disallowed_include("#define ADD(a, b) \\\n  ((a) + (b))\n#include <cuda_bf16.h>\n", 1)
            .empty());
  CHECK(
      disallowed_include(
          "auto s = R\"(\n#include \"/etc/passwd\"\n)\";\nchar q = '\"';\n#include \"mma.h\"\n", 1)
          .empty());
}

TEST_CASE("splices as NVRTC makes them; __has_include only in its plain form") {
  const char* bad[] = {
      "// note \\ \n#include \"/etc/passwd\"\n",  // not a splice for NVRTC: a real directive
      "#if __has_include(<a/*b>)\n#endif\n#include \"/etc/passwd\"\n*/\n",
      "#define H __has_include\n#if H(\"/etc/passwd\")\n#endif\n",
      "#define CAT(a, b) a##b\n#if CAT(__has_, include)(<x>)\n#endif\n",
      "#include <a b>\n",
  };
  for (const char* src : bad) {
    INFO(src);
    CHECK_FALSE(disallowed_include(src, 1).empty());
  }
  CHECK(disallowed_include("#if __has_include(<cuda_fp8.h>)\n#include <cuda_fp8.h>\n#endif\n", 1)
            .empty());
}

TEST_CASE("a precompiled header covers the leading includes up to the last heavy one") {
  CHECK(pch_headers("#include <cuda_runtime.h>\n#include <cub/block/block_reduce.cuh>\n"
                    "#include <cfloat>\n__global__ void k() {}\n") ==
        std::vector<std::string>{"cuda_runtime.h", "cub/block/block_reduce.cuh"});
  // Comments and blank lines before and between them are nothing to the preprocessor.
  CHECK(pch_headers("/* kernrl\nproblem: X\n*/\n\n// a note\n#  include <cooperative_groups.h>\n"
                    "#include <cooperative_groups/reduce.h> // reduce\n") ==
        std::vector<std::string>{"cooperative_groups.h", "cooperative_groups/reduce.h"});
  // Only light headers: no PCH.
  CHECK(pch_headers("#include <cuda_runtime.h>\n#include <cmath>\n").empty());
  // Anything else before a header stops the run: what precedes it could change what it sees.
  CHECK(pch_headers("#define CUB_STDERR\n#include <cub/cub.cuh>\n").empty());
  CHECK(pch_headers("#include <cuda_fp16.h>\n#undef X\n#include <cub/cub.cuh>\n").empty());
  CHECK(pch_headers("namespace a {}\n#include <cub/cub.cuh>\n").empty());
  CHECK(pch_headers("#if 1\n#include <cub/cub.cuh>\n#endif\n").empty());
  CHECK(pch_headers("#include <cub/cub.cuh>\n#define X 1\n#include <thrust/sort.h>\n") ==
        std::vector<std::string>{"cub/cub.cuh"});
  // Quoted names, odd names and trailing text are not covered.
  CHECK(pch_headers("#include \"cub/cub.cuh\"\n").empty());
  CHECK(pch_headers("#include <cub/../cub.cuh>\n").empty());
  CHECK(pch_headers("#include <cub/cub.cuh> extra\n").empty());
  CHECK(pch_headers("#include_next <cub/cub.cuh>\n").empty());
}
