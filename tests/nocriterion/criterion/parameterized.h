/* SPDX-License-Identifier: MIT */
/* stand-in: see criterion.h */
#include "criterion.h"
