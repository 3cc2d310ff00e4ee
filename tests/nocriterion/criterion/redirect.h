/* stand-in: see criterion.h */
#include "criterion.h"
