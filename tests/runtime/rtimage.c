/* SPDX-License-Identifier: MIT */
/*
 * Writes a runtime provider's object for a named architecture to a file
 * (t-runtime-aarch64.sh): what the library would map on that machine,
 * for the cross tools and usdtkit's own note reader to check here.
 *
 *   rtimage x86_64|aarch64 OUT
 *
 * Provider "rtimg": probe "first" (int32_t, char *) and probe "second"
 * (twelve uint64_t).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfso.h"
#include "metadata.h"
#include "model.h"

static void set_type(struct usdt_arg *a, const char *spelling, enum usdt_type_class cls,
		     bool is_signed)
{
	a->type.spelling = strdup(spelling);
	a->type.c_spelling = strdup(spelling);
	a->type.cls = cls;
	a->type.size = cls == USDT_T_INTEGER && is_signed ? 4 : 8;
	a->type.is_signed = is_signed;
}

int main(int argc, char **argv)
{
	static const int first_sizes[] = {-4, 8};
	int second_sizes[12], k;
	enum usdt_arch arch;
	struct usdt_program prog;
	struct usdt_provider *pv;
	struct usdt_meta_blob blob;
	struct usdt_rt_site sites[2];
	struct usdt_rt_image img;
	char a0[256], a1[512];
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: rtimage x86_64|aarch64 OUT\n");
		return 2;
	}
	arch = strcmp(argv[1], "aarch64") == 0 ? USDT_ARCH_AARCH64 : USDT_ARCH_X86_64;
	usdt_program_init(&prog);
	prog.nproviders = 1;
	pv = prog.providers = calloc(1, sizeof(*pv));
	pv->name = strdup("rtimg");
	usdt_meta_default_attrs(pv->attr);
	pv->nprobes = 2;
	pv->probes = calloc(2, sizeof(*pv->probes));
	pv->probes[0].name = strdup("first");
	pv->probes[0].nargs = pv->probes[0].nxargs = 2;
	pv->probes[0].args = calloc(2, sizeof(struct usdt_arg));
	pv->probes[0].xargs = calloc(2, sizeof(struct usdt_arg));
	pv->probes[0].argmap = calloc(2, 1);
	pv->probes[0].argmap[1] = 1;
	set_type(&pv->probes[0].args[0], "int32_t", USDT_T_INTEGER, true);
	set_type(&pv->probes[0].xargs[0], "int32_t", USDT_T_INTEGER, true);
	set_type(&pv->probes[0].args[1], "char *", USDT_T_STRING, false);
	set_type(&pv->probes[0].xargs[1], "char *", USDT_T_STRING, false);
	pv->probes[1].name = strdup("second");
	pv->probes[1].nargs = pv->probes[1].nxargs = 12;
	pv->probes[1].args = calloc(12, sizeof(struct usdt_arg));
	pv->probes[1].xargs = calloc(12, sizeof(struct usdt_arg));
	pv->probes[1].argmap = calloc(12, 1);
	for (k = 0; k < 12; k++) {
		pv->probes[1].argmap[k] = (unsigned char)k;
		set_type(&pv->probes[1].args[k], "uint64_t", USDT_T_INTEGER, false);
		set_type(&pv->probes[1].xargs[k], "uint64_t", USDT_T_INTEGER, false);
		second_sizes[k] = 8;
	}
	if (usdt_meta_build(&prog, &blob) != 0 ||
	    usdt_rt_argspecs(arch, first_sizes, 2, a0, sizeof(a0)) < 0 ||
	    usdt_rt_argspecs(arch, second_sizes, 12, a1, sizeof(a1)) < 0) {
		fprintf(stderr, "rtimage: cannot build the metadata or the argument specs\n");
		return 1;
	}
	sites[0] = (struct usdt_rt_site){"rtimg", "first", a0, "first"};
	sites[1] = (struct usdt_rt_site){"rtimg", "second", a1, "second"};
	if (usdt_rt_image_build(arch, "usdtkit:rtimg", sites, 2, &blob, &img) != 0) {
		fprintf(stderr, "rtimage: cannot build the object\n");
		return 1;
	}
	f = fopen(argv[2], "wb");
	if (!f || fwrite(img.bytes, 1, img.size, f) != img.size || fclose(f) != 0) {
		fprintf(stderr, "rtimage: cannot write %s\n", argv[2]);
		return 1;
	}
	printf("stub 0x%llx 0x%llx sema 0x%llx 0x%llx\n", (unsigned long long)img.stub[0],
	       (unsigned long long)img.stub[1], (unsigned long long)img.sema[0],
	       (unsigned long long)img.sema[1]);
	usdt_rt_image_free(&img);
	usdt_meta_blob_free(&blob);
	usdt_program_free(&prog);
	return 0;
}
