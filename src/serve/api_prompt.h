// POST /v1/prompt (docs/serve.md): a problem's task prompt, with retrieved examples, or the next
// turn's prompt after a previous answer and its record (docs/training.md).
#pragma once

#include <string>

#include "serve/api.h"

namespace kernrl::serve {

// Answers the request body {problem, previous?, record?, turn?, language?, examples?,
// include_own?} with {schema, prompt, prompt_name, prompt_version, examples}, or kernrl's error
// {"error": {code, message}} (400, 404 for an unknown problem).
HttpResponse v1_prompt(const Service& svc, const std::string& body);

}  // namespace kernrl::serve
