#include "kiln/interp/interpreter.h"
