// SPDX-License-Identifier: MIT
/*
 * The bridge to the provider metadata note (dtrace-G/metadata.h). Its own
 * file because the provider model and the note reader both name a
 * `struct usdt_probe`: this file sees only the metadata side and hands the
 * worker plain strings.
 */
#include <string.h>

#include "meta.h"
#include "metadata.h"

int hd_meta_each(const void *desc, size_t size, bool big_endian, hd_meta_fn fn, void *arg,
		 const char **why)
{
	struct usdt_meta_view v;

	if (usdt_meta_open(&v, desc, size, big_endian, why) != 0)
		return -1;
	for (uint32_t i = 0; i < v.nproviders; i++) {
		struct usdt_meta_provider mp;

		usdt_meta_provider(&v, i, &mp);
		for (uint32_t j = mp.first_probe; j < mp.first_probe + mp.nprobes; j++) {
			struct usdt_meta_probe pr;

			usdt_meta_probe(&v, j, &pr);
			for (uint32_t a = 0; a < pr.nargs; a++) {
				struct usdt_meta_arg ma;

				usdt_meta_arg(&v, pr.first_arg + a, &ma);
				fn(mp.name, pr.name, a, ma.name, ma.cls == USDT_T_STRING, arg);
			}
		}
	}
	return 0;
}
