/* csum shim: everything the compiled file needs is in csum_shim.h (force-included). */
#include "csum_shim.h"
