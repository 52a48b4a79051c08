// The one translation unit that compiles gemmi's writer implementations (to_pdb.hpp,
// to_mmcif.hpp are header-only; their definitions sit behind GEMMI_WRITE_IMPLEMENTATION).
//
// Debian's gemmi-dev drops the bundled stb_sprintf.h (and depends on no stb package), so the
// writers format numbers with std::snprintf (USE_STD_SNPRINTF). cpufold never calls
// setlocale, so the C locale's '.' decimal point is what gets written. Only this file includes
// gemmi/sprintf.hpp, so the macro cannot make two definitions of gemmi's inline helpers differ.
#define GEMMI_WRITE_IMPLEMENTATION
#define USE_STD_SNPRINTF
#include <gemmi/to_mmcif.hpp>
#include <gemmi/to_pdb.hpp>
