// Markdown answers as CommonMark reads them, other formats named, and line numbers that stay
// those of the submitted file.
#include <doctest/doctest.h>

#include <sstream>
#include <vector>

#include "extract/extract.h"
#include "parse/launch_block.h"

using namespace kernrl;

namespace {

const char* kCode =
    "extern \"C\" __global__ void softmax_rows(const float* x, float* out, int dim) {\n"
    "  int row = blockIdx.x;\n"
    "}\n";
const char* kBlock =
    "/* kernrl\n"
    "problem: L1_23_Softmax\n"
    "launches:\n"
    "  - kernel: softmax_rows\n"
    "    grid: [batch_size]\n"
    "    block: [256]\n"
    "    args: [x, out, dim]\n"
    "*/\n";

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  std::string l;
  while (std::getline(in, l)) out.push_back(l);
  return out;
}

// Every non-blank line of the extracted code is, apart from indentation, the file's line at
// first_line + its index: diagnostics of the compiler and the launch block point at the right line.
void check_lines_map(const ExtractedSource& s, const std::string& file) {
  auto code = lines_of(s.code);
  auto text = lines_of(normalize_text(file));
  REQUIRE(s.first_line >= 1);
  for (size_t i = 0; i < code.size(); ++i) {
    std::string c = code[i];
    if (c.find_first_not_of(" \t") == std::string::npos) continue;
    c = c.substr(c.find_first_not_of(" \t"));
    size_t at = static_cast<size_t>(s.first_line) - 1 + i;
    INFO("code line " << i << ": " << c);
    REQUIRE(at < text.size());
    if (c == "/* kernrl" || c == "*/") continue;  // added around a bare YAML block, on a fence line
    CHECK(text[at].find(c) != std::string::npos);
  }
}

int file_line_of(const std::string& file, const std::string& needle) {
  auto text = lines_of(normalize_text(file));
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i].find(needle) != std::string::npos) return static_cast<int>(i) + 1;
  return -1;
}

}  // namespace

TEST_CASE("fences as CommonMark defines them") {
  std::string body = std::string(kBlock) + kCode;
  struct Case {
    const char* name;
    std::string md;
  };
  std::vector<Case> cases = {
      {"backticks, cuda", "Here:\n\n```cuda\n" + body + "```\n"},
      {"tildes", "Here:\n\n~~~\n" + body + "~~~\n"},
      {"four backticks around a ``` line", "Here:\n\n````cpp\n// ``` inside\n" + body + "````\n"},
      {"info c++ with attributes", "```c++ {.numberLines}\n" + body + "```\n"},
      {"info cu", "```cu\n" + body + "```\n"},
      {"no info", "```\n" + body + "```\n"},
      {"indented fence (its indentation comes off the content)", ""},
      {"unclosed fence runs to the end", "Text\n```cuda\n" + body},
      {"CRLF", ""},
      {"byte-order mark", "\xEF\xBB\xBF```cuda\n" + body + "```\n"},
  };
  std::string crlf;
  for (char c : "Here:\n\n```cuda\n" + body + "```\nDone.\n") {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  cases[8].md = crlf;
  cases[6].md = "Text\n\n   ```cuda\n";
  for (const auto& l : lines_of(body)) cases[6].md += "   " + l + "\n";
  cases[6].md += "   ```\n";
  for (const auto& c : cases) {
    INFO(c.name);
    auto s = extract_kernel(c.md, "answer.md");
    CHECK(s.from_markdown);
    CHECK(s.code.find('\r') == std::string::npos);
    CHECK(s.code.find("__global__") != std::string::npos);
    check_lines_map(s, c.md);
    auto plan = parse_launch_block(s);
    CHECK(plan.line == file_line_of(c.md, "/* kernrl"));
    CHECK(plan.launches.at(0).line == file_line_of(c.md, "- kernel: softmax_rows"));
  }
}

TEST_CASE("fences inside list items and block quotes keep their lines") {
  std::string md = "Steps:\n\n1. Write the kernel:\n\n   ```cuda\n";
  for (const auto& l : lines_of(std::string(kBlock) + kCode)) md += "   " + l + "\n";
  md += "   ```\n2. Done.\n";
  auto s = extract_kernel(md, "a.md");
  check_lines_map(s, md);
  CHECK(parse_launch_block(s).line == file_line_of(md, "/* kernrl"));
  CHECK(s.code.find("   /* kernrl") ==
        std::string::npos);  // the list item's indentation is not code

  std::string quoted = "> ```cuda\n";
  for (const auto& l : lines_of(std::string(kBlock) + kCode)) quoted += "> " + l + "\n";
  quoted += "> ```\n";
  auto q = extract_kernel(quoted, "a.md");
  check_lines_map(q, quoted);
  CHECK(q.first_line == 2);

  // A tab inside a list item's code becomes the spaces CommonMark gives it; the line stays.
  std::string tabbed = "- item\n\n  ```cu\n";
  for (const auto& l : lines_of(std::string(kBlock) + "\tint x;\n" + kCode))
    tabbed += "  " + l + "\n";
  tabbed += "  ```\n";
  auto t = extract_kernel(tabbed, "a.md");
  check_lines_map(t, tabbed);
}

TEST_CASE("blank lines inside a fenced block keep the lines after them") {
  std::string md = "x\n```cuda\n" + std::string(kBlock) + "\n\n\n" + kCode + "```\n";
  auto s = extract_kernel(md, "a.md");
  CHECK(s.first_line == 3);
  check_lines_map(s, md);
  CHECK(lines_of(s.code).at(8 + 3).find("__global__") != std::string::npos);
}

TEST_CASE("the launch block in a block of its own is joined with the kernels") {
  SUBCASE("```yaml holding /* kernrl ... */, after the kernels") {
    std::string md = "The kernel:\n\n```cuda\n" + std::string(kCode) +
                     "```\n\nAnd how to launch it:\n\n```yaml\n" + kBlock + "```\n";
    auto s = extract_kernel(md, "a.md");
    check_lines_map(s, md);
    CHECK(s.first_line == 4);
    auto plan = parse_launch_block(s);
    CHECK(plan.line == file_line_of(md, "/* kernrl"));
    CHECK(plan.launches[0].line == file_line_of(md, "- kernel:"));
    CHECK(plan.launches[0].kernel == "softmax_rows");
    // The prose between the blocks is not code.
    CHECK(s.code.find("how to launch") == std::string::npos);
    CHECK(s.code.find("```") == std::string::npos);
  }
  SUBCASE("bare YAML before the kernels") {
    std::string yaml = std::string(kBlock);
    yaml = yaml.substr(yaml.find('\n') + 1);  // without /* kernrl
    yaml = yaml.substr(0, yaml.find("*/"));   // and without */
    std::string md = "Launch:\n```yaml\n" + yaml + "```\nKernel:\n```cuda\n" + kCode + "```\n";
    auto s = extract_kernel(md, "a.md");
    check_lines_map(s, md);
    auto plan = parse_launch_block(s);
    CHECK(plan.line == 2);  // the opening fence line, where /* kernrl is put
    CHECK(plan.problem == "L1_23_Softmax");
    CHECK(plan.launches[0].line == file_line_of(md, "- kernel:"));
    CHECK(s.code.find("__global__") != std::string::npos);
  }
  SUBCASE("bare YAML whose first line is kernrl") {
    std::string yaml = std::string(kBlock);
    yaml = "kernrl\n" + yaml.substr(yaml.find('\n') + 1);
    yaml = yaml.substr(0, yaml.find("*/"));
    std::string md = "```cuda\n" + std::string(kCode) + "```\n```\n" + yaml + "```\n";
    auto s = extract_kernel(md, "a.md");
    auto plan = parse_launch_block(s);
    CHECK(plan.line == file_line_of(md, "kernrl"));
    CHECK(plan.launches[0].kernel == "softmax_rows");
  }
  SUBCASE("the last launch block wins; its kernels are the nearest block before it") {
    std::string draft = std::string(kCode);
    draft.replace(draft.find("softmax_rows"), 12, "draft_kernel");
    std::string md = "```cuda\n" + draft + "```\n```yaml\n" + kBlock + "```\nBetter:\n```cuda\n" +
                     kCode + "```\n```yaml\n" + kBlock + "```\n";
    auto s = extract_kernel(md, "a.md");
    CHECK(s.code.find("draft_kernel") == std::string::npos);
    CHECK(parse_launch_block(s).line == file_line_of(md, "Better:") + 7);
  }
  SUBCASE("a launch block without kernels anywhere") {
    std::string md = "```yaml\n" + std::string(kBlock) + "```\n```python\nprint(1)\n```\n";
    CHECK_THROWS_WITH_AS(extract_kernel(md, "a.md"),
                         doctest::Contains("no other code block holds __global__"), FormatError);
  }
  SUBCASE("bare YAML may not close the comment itself") {
    std::string md =
        "```cuda\n" + std::string(kCode) + "```\n```yaml\nlaunches:\n  - kernel: k */\n```\n";
    CHECK_THROWS_WITH_AS(extract_kernel(md, "a.md"), doctest::Contains("contains */"), FormatError);
  }
}

TEST_CASE("answers in another format are named, with what kernrl expects") {
  const std::string kb =
      "import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
      "src = '''__global__ void k(float* x) {}'''\nmod = load_inline(name='k', cpp_sources='', "
      "cuda_sources=src)\n"
      "class ModelNew(nn.Module):\n    def forward(self, x):\n        return mod.k(x)\n";
  const std::string triton =
      "import triton\nimport triton.language as tl\n@triton.jit\ndef k(x_ptr):\n    pass\n";
  const std::string torch_only =
      "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return "
      "torch.softmax(x, 1)\n";
  auto message = [](const std::string& text, const std::string& file) {
    try {
      extract_kernel(text, file);
    } catch (const FormatError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const auto& file : {"answer.py", "answer.md"}) {
    INFO(file);
    std::string wrap = std::string(file) == "answer.md" ? "Here is my solution:\n```python\n" : "";
    std::string tail = wrap.empty() ? "" : "```\n";
    std::string m = message(wrap + kb + tail, file);
    CHECK(m.find("KernelBench-style") != std::string::npos);
    CHECK(m.find("ModelNew") != std::string::npos);
    CHECK(m.find("docs/kernel-format.md") != std::string::npos);
    CHECK(m.find('\n') == std::string::npos);
    // A Triton answer is a Triton kernel file (docs/kernel-format.md, "Triton kernels").
    CHECK(extract_kernel(wrap + triton + tail, file).language == "triton");
    CHECK(message(wrap + torch_only + tail, file).find("PyTorch-only") != std::string::npos);
  }
  CHECK(message("print('hello')\n", "a.py").find("a Python file") != std::string::npos);
  // A raw Python answer without any fence, as a .txt.
  CHECK(message(kb, "answer.txt").find("KernelBench-style") != std::string::npos);
  // Plain prose still says what is missing, and what is expected.
  std::string none = message("I cannot do that.", "a.md");
  CHECK(none.find("no fenced code block") != std::string::npos);
  CHECK(none.find("docs/kernel-format.md") != std::string::npos);
}

TEST_CASE(".cu files: CRLF, lone CR and a byte-order mark are normalized; lines are kept") {
  std::string cu = std::string(kBlock) + kCode;
  std::string crlf, cr;
  for (char c : cu) {
    if (c == '\n')
      crlf += "\r\n", cr += "\r";
    else
      crlf += c, cr += c;
  }
  for (const auto& text : {crlf, cr, "\xEF\xBB\xBF" + cu}) {
    auto s = extract_kernel(text, "k.cu");
    CHECK(s.code == cu);
    CHECK(s.first_line == 1);
    CHECK(parse_launch_block(s).launches[0].line == 4);
  }
  CHECK(extract_kernel(crlf, "K.CUH").code == cu);
}

TEST_CASE("overlong lines are a format error naming the line") {
  std::string text = "int a;\n" + std::string(kMaxLineChars + 1, ' ') + "\nint b;\n";
  try {
    extract_kernel(text, "k.cu");
    FAIL("no error");
  } catch (const FormatError& e) {
    CHECK(e.line == 2);
    CHECK(std::string(e.what()).find("line 2") != std::string::npos);
  }
  CHECK_NOTHROW(
      extract_kernel("int a;\n" + std::string(kMaxLineChars, ' ') + "\n" + kBlock, "k.cu"));
  // 40,000 blanks on one line of a markdown answer: an error, never a crash.
  CHECK_THROWS_AS(extract_kernel("```cuda\n" + std::string(40000, ' ') + "\n```\n", "a.md"),
                  FormatError);
}
