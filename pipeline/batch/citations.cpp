#include "pipeline/batch/citations.h"

namespace cpufold {

std::string cite_bibtex(bool used_msas) {
  std::string text = R"(@article{Jumper2021,
  author = {Jumper, John and Evans, Richard and Pritzel, Alexander and Green, Tim and Figurnov, Michael and Ronneberger, Olaf and Tunyasuvunakool, Kathryn and Bates, Russ and {\v{Z}}{\'{i}}dek, Augustin and Potapenko, Anna and others},
  title = {{Highly accurate protein structure prediction with AlphaFold}},
  journal = {Nature},
  volume = {596},
  number = {7873},
  pages = {583--589},
  year = {2021},
  doi = {10.1038/s41586-021-03819-2},
  comment = {AlphaFold2: the model and its parameters}
}
@article{Mirdita2022,
  author = {Mirdita, Milot and Sch{\"{u}}tze, Konstantin and Moriwaki, Yoshitaka and Heo, Lim and Ovchinnikov, Sergey and Steinegger, Martin},
  title = {{ColabFold: making protein folding accessible to all}},
  journal = {Nature Methods},
  volume = {19},
  number = {6},
  pages = {679--682},
  year = {2022},
  doi = {10.1038/s41592-022-01488-1},
  comment = {ColabFold: the inputs, options and outputs cpufold predict follows}
}
)";
  if (used_msas) {
    text +=
        "% The MSAs were precomputed: also cite the tools and databases that made them (for\n"
        "% ColabFold's MSAs: MMseqs2, UniRef30 and, with environmental sequences, ColabFoldDB;\n"
        "% for AlphaFold2's: jackhmmer, HHblits, UniRef90, BFD and MGnify).\n";
  }
  return text;
}

}  // namespace cpufold
