// Everything is inline in include/CFiefAtomics.h; SwiftPM needs one source file per C target.
#include "CFiefAtomics.h"
