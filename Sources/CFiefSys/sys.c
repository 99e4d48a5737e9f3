// Everything is inline in include/CFiefSys.h; SwiftPM needs one source file per C target.
#include "CFiefSys.h"
