/* SPDX-License-Identifier: MIT */
/*
 * C type names as D sizes them: a provider's declared argument types
 * (`args[N]`), casts and declarations the engine's own table does not
 * know. One model, below the semantic checks and the engine.
 */
#include <string.h>

#include "d.h"

bool dt_ctype_is_string(const char *ty)
{
	return ty && (!strcmp(ty, "char *") || !strcmp(ty, "const char *") ||
		      !strcmp(ty, "string") || !strcmp(ty, "char*") || !strcmp(ty, "const char*") ||
		      !strcmp(ty, "unsigned char *"));
}

/* Integer size and sign of a C type name as D would have it. */
void dt_ctype_size(const char *ty, unsigned *size, bool *is_unsigned)
{
	*size = 8;
	*is_unsigned = false;
	if (!ty)
		return;
	if (strchr(ty, '*'))
		*is_unsigned = true;
	else if (strstr(ty, "int8") || !strcmp(ty, "char") || !strcmp(ty, "signed char") ||
		 !strcmp(ty, "unsigned char") || !strcmp(ty, "uchar_t"))
		*size = 1;
	else if (strstr(ty, "int16") || strstr(ty, "short"))
		*size = 2;
	else if (strstr(ty, "int32") || !strcmp(ty, "int") || !strcmp(ty, "unsigned") ||
		 !strcmp(ty, "unsigned int") || !strcmp(ty, "signed int") || !strcmp(ty, "pid_t") ||
		 !strcmp(ty, "uid_t") || !strcmp(ty, "id_t") || !strcmp(ty, "uint_t") ||
		 !strcmp(ty, "bool") || !strcmp(ty, "boolean_t") || !strcmp(ty, "processorid_t"))
		*size = 4;
	if (!strncmp(ty, "unsigned", 8) || !strncmp(ty, "uint", 4) || !strncmp(ty, "u_", 2) ||
	    !strcmp(ty, "size_t") || !strcmp(ty, "uintptr_t") || !strncmp(ty, "uchar", 5) ||
	    !strncmp(ty, "ushort", 6) || !strncmp(ty, "ulong", 5))
		*is_unsigned = true;
}
