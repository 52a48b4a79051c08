// cite.bibtex: the references for what a `cpufold predict` run used, as ColabFold writes one
// per results directory.
#pragma once

#include <string>

namespace cpufold {

// AlphaFold2 (the model and its parameters) and ColabFold (the conventions, inputs and outputs
// cpufold follows). `used_msas`: a BibTeX comment asks to cite the tools and databases that
// made the precomputed MSAs, which cpufold cannot know.
std::string cite_bibtex(bool used_msas);

}  // namespace cpufold
