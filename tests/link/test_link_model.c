/* SPDX-License-Identifier: MIT */
/*
 * usdt_link_object() on provider models built by hand (no parser needed):
 * the output object is read back with libelf and every property the -G
 * object promises is checked against the model values written below:
 * semaphores (name, binding, visibility, size, section), the metadata note
 * (decoded by the validating reader and compared field by field), a
 * non-executable .note.GNU-stack, nothing left in the temporary directory.
 *
 * Usage: test_link_model [CC [CFLAGS]]   (default: cc, "")
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "link.h"
#include "metadata.h"
#include "../lib/check.h"

static struct usdt_type ty(const char *spelling, enum usdt_type_class cls, unsigned size, int sgn)
{
	struct usdt_type t;

	memset(&t, 0, sizeof(t));
	t.spelling = (char *)spelling;
	t.c_spelling = (char *)spelling;
	t.cls = cls;
	t.size = size;
	t.is_signed = sgn;
	return t;
}

/* provider shop { probe order__start(int count, char *who); probe idle(); };
 * provider net { probe rx(void *pkt, long len) : (long len, void *pkt, long len); };
 * #pragma D attributes Evolving/Stable/ISA provider shop provider
 * #pragma D attributes Unstable/Evolving/Common provider shop args */
static struct usdt_arg shop_start_args[2], net_rx_args[2], net_rx_xargs[3];
static unsigned char net_rx_map[3] = {1, 0, 1};
static struct usdt_probe shop_probes[2], net_probes[1];
static struct usdt_provider providers[2];

static void build_model(struct usdt_program *prog)
{
	size_t i;

	shop_start_args[0] = (struct usdt_arg){"count", ty("int", USDT_T_INTEGER, 4, 1), {0}};
	shop_start_args[1] = (struct usdt_arg){"who", ty("char *", USDT_T_STRING, 8, 0), {0}};
	shop_probes[0] = (struct usdt_probe){
	    "order__start", {"shop.d", 2, 9}, 2, shop_start_args, 2, shop_start_args, NULL};
	shop_probes[1] = (struct usdt_probe){"idle", {"shop.d", 3, 9}, 0, NULL, 0, NULL, NULL};
	net_rx_args[0] = (struct usdt_arg){"pkt", ty("void *", USDT_T_POINTER, 8, 0), {0}};
	net_rx_args[1] = (struct usdt_arg){"len", ty("long", USDT_T_INTEGER, 8, 1), {0}};
	net_rx_xargs[0] = net_rx_args[1];
	net_rx_xargs[1] = net_rx_args[0];
	net_rx_xargs[2] = net_rx_args[1];
	net_rx_xargs[1].type.spelling = "pkt_t *";
	net_rx_xargs[1].type.c_spelling = NULL;
	net_probes[0] = (struct usdt_probe){"rx", {"net.d", 1, 30}, 2,	       net_rx_args,
					    3,	  net_rx_xargs,	    net_rx_map};
	memset(providers, 0, sizeof(providers));
	providers[0].name = "shop";
	providers[0].nprobes = 2;
	providers[0].probes = shop_probes;
	providers[1].name = "net";
	providers[1].nprobes = 1;
	providers[1].probes = net_probes;
	for (i = 0; i < USDT_ATTR_COUNT; i++) {
		providers[0].attr[i] =
		    (struct usdt_attr){USDT_STAB_PRIVATE, USDT_STAB_PRIVATE, USDT_CLASS_UNKNOWN};
		providers[1].attr[i] = providers[0].attr[i];
	}
	providers[0].attr[USDT_ATTR_PROVIDER] =
	    (struct usdt_attr){USDT_STAB_EVOLVING, USDT_STAB_STABLE, USDT_CLASS_ISA};
	providers[0].attr[USDT_ATTR_ARGS] =
	    (struct usdt_attr){USDT_STAB_UNSTABLE, USDT_STAB_EVOLVING, USDT_CLASS_COMMON};
	memset(prog, 0, sizeof(*prog));
	prog->nproviders = 2;
	prog->providers = providers;
}

/* What the dump of the note must say, written from the model above by hand. */
static const char expected_dump[] =
    "provider shop\n"
    "  attributes provider Evolving/Stable/ISA\n"
    "  attributes module Private/Private/Unknown\n"
    "  attributes function Private/Private/Unknown\n"
    "  attributes name Private/Private/Unknown\n"
    "  attributes args Unstable/Evolving/Common\n"
    "  probe order__start args 2 xargs 2\n"
    "    arg 0 from 0 \"int\" c \"int\" integer size 4 signed name count\n"
    "    arg 1 from 1 \"char *\" c \"char *\" string size 8 unsigned name who\n"
    "    xarg 0 from 0 \"int\" c \"int\" integer size 4 signed name count\n"
    "    xarg 1 from 1 \"char *\" c \"char *\" string size 8 unsigned name who\n"
    "  probe idle args 0 xargs 0\n"
    "provider net\n"
    "  attributes provider Private/Private/Unknown\n"
    "  attributes module Private/Private/Unknown\n"
    "  attributes function Private/Private/Unknown\n"
    "  attributes name Private/Private/Unknown\n"
    "  attributes args Private/Private/Unknown\n"
    "  probe rx args 2 xargs 3\n"
    "    arg 0 from 0 \"void *\" c \"void *\" pointer size 8 unsigned name pkt\n"
    "    arg 1 from 1 \"long\" c \"long\" integer size 8 signed name len\n"
    "    xarg 0 from 1 \"long\" c \"long\" integer size 8 signed name len\n"
    "    xarg 1 from 0 \"pkt_t *\" c \"-\" pointer size 8 unsigned name pkt\n"
    "    xarg 2 from 1 \"long\" c \"long\" integer size 8 signed name len\n";

struct found {
	int nsem, sem_ok[3];
	int note_ok, gnu_stack_ok;
	int elfclass;
	char dump[4096];
};

static const char *const sem_names[3] = {"shop_order__start_semaphore", "shop_idle_semaphore",
					 "net_rx_semaphore"};

static void inspect(const char *path, struct found *f)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;

	memset(f, 0, sizeof(*f));
	CHECKF(fd >= 0, "open %s: %s", path, strerror(errno));
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	CHECKF(elf && gelf_getehdr(elf, &eh), "not ELF: %s", path);
	if (!elf || !gelf_getehdr(elf, &eh))
		return;
	CHECKF(eh.e_type == ET_REL, "e_type %d, want ET_REL", eh.e_type);
	f->elfclass = eh.e_ident[EI_CLASS];
	elf_getshdrstrndx(elf, &shstrndx);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		gelf_getshdr(scn, &sh);
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (strcmp(name, ".note.GNU-stack") == 0)
			f->gnu_stack_ok = !(sh.sh_flags & SHF_EXECINSTR);
		if (strcmp(name, ".note.usdtkit") == 0) {
			Elf_Data *d = elf_getdata(scn, NULL);
			GElf_Nhdr nh;
			size_t no, dof, next;

			CHECKF(sh.sh_type == SHT_NOTE, ".note.usdtkit type %u", sh.sh_type);
			CHECKF(sh.sh_flags & SHF_ALLOC, ".note.usdtkit not SHF_ALLOC");
			next = gelf_getnote(d, 0, &nh, &no, &dof);
			CHECKF(next == d->d_size, "one note fills the section (%zu of %zu)", next,
			       d->d_size);
			CHECKF(nh.n_type == 1 && nh.n_namesz == 8 &&
				   memcmp((char *)d->d_buf + no, "usdtkit", 8) == 0,
			       "note owner/type");
			if (next) {
				struct usdt_meta_view v;
				const char *why = NULL;
				FILE *mem = fmemopen(f->dump, sizeof(f->dump) - 1, "w");

				CHECKF(usdt_meta_open(&v, (char *)d->d_buf + dof, nh.n_descsz,
						      eh.e_ident[EI_DATA] == ELFDATA2MSB,
						      &why) == 0,
				       "metadata rejected: %s", why ? why : "?");
				usdt_meta_dump(&v, mem);
				fclose(mem);
				f->note_ok = 1;
			}
		}
		if (sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t i, n = sh.sh_size / sh.sh_entsize;

			for (i = 1; i < n; i++) {
				GElf_Sym s;
				const char *sn;
				int k;

				gelf_getsym(d, (int)i, &s);
				sn = elf_strptr(elf, sh.sh_link, s.st_name);
				if (GELF_ST_BIND(s.st_info) != STB_LOCAL &&
				    s.st_shndx != SHN_UNDEF) {
					int known = 0;

					for (k = 0; k < 3; k++)
						known |= strcmp(sn, sem_names[k]) == 0;
					/* gcc's i386 PIC thunks: hidden COMDAT, harmless. */
					known |= strncmp(sn, "__x86.get_pc_thunk.", 19) == 0 &&
						 GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN;
					CHECKF(known, "unexpected global symbol '%s'", sn);
				}
				for (k = 0; k < 3; k++) {
					GElf_Shdr ssh;
					const char *secname;

					if (strcmp(sn, sem_names[k]))
						continue;
					f->nsem++;
					gelf_getshdr(elf_getscn(elf, s.st_shndx), &ssh);
					secname = elf_strptr(elf, shstrndx, ssh.sh_name);
					f->sem_ok[k] =
					    GELF_ST_BIND(s.st_info) == STB_GLOBAL &&
					    GELF_ST_VISIBILITY(s.st_other) == STV_HIDDEN &&
					    GELF_ST_TYPE(s.st_info) == STT_OBJECT &&
					    s.st_size == 2 && strcmp(secname, ".probes") == 0 &&
					    (ssh.sh_flags & SHF_WRITE);
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
}

static int count_entries(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	closedir(d);
	return n;
}

/* Every byte of a valid desc mutated, and every truncation: no crash, and
 * anything accepted is safe to dump. Bounded: about 4 tries per byte. */
static void fuzz_reader(const struct usdt_program *prog)
{
	struct usdt_meta_blob b;
	unsigned char *desc, *mut;
	size_t size, i, accepted = 0;
	static const unsigned char vals[] = {0x00, 0xff, 0x7f, 0x01};
	FILE *null = fopen("/dev/null", "w");

	CHECKF(usdt_meta_build(prog, &b) == 0, "usdt_meta_build");
	size = b.nwords * 4 + b.strsize;
	desc = malloc(size);
	mut = malloc(size);
	memcpy(desc, b.words, b.nwords * 4);
	memcpy(desc + b.nwords * 4, b.strtab, b.strsize);
	/* The same desc in the other byte order reads back identically. */
	{
		char a[4096], bdump[4096];
		FILE *fa = fmemopen(a, sizeof(a) - 1, "w"),
		     *fb = fmemopen(bdump, sizeof(bdump) - 1, "w");
		struct usdt_meta_view v;
		const char *why = "?";
		uint32_t x;

		memset(a, 0, sizeof(a));
		memset(bdump, 0, sizeof(bdump));
		CHECKF(usdt_meta_open(&v, desc, size, false, &why) == 0, "desc rejected: %s", why);
		usdt_meta_dump(&v, fa);
		fclose(fa);
		memcpy(mut, desc, size);
		for (i = 0; i < b.nwords; i++) {
			memcpy(&x, mut + i * 4, 4);
			x = __builtin_bswap32(x);
			memcpy(mut + i * 4, &x, 4);
		}
		CHECKF(usdt_meta_open(&v, mut, size, true, &why) == 0, "swapped desc rejected: %s",
		       why);
		usdt_meta_dump(&v, fb);
		fclose(fb);
		CHECKF(strcmp(a, bdump) == 0 && a[0], "byte-swapped desc reads differently");
		CHECKF(usdt_meta_open(&v, mut, size, false, &why) != 0,
		       "byte-swapped desc accepted in the wrong byte order");
	}
	for (i = 0; i <= size; i++) {
		struct usdt_meta_view v;
		const char *why;

		memcpy(mut, desc, size);
		if (usdt_meta_open(&v, mut, i, false, &why) == 0) {
			CHECKF(i == size, "a desc truncated to %zu bytes was accepted", i);
			usdt_meta_dump(&v, null);
		}
	}
	for (i = 0; i < size; i++) {
		size_t k;

		for (k = 0; k < sizeof(vals); k++) {
			struct usdt_meta_view v;
			const char *why;

			memcpy(mut, desc, size);
			if (mut[i] == vals[k])
				continue;
			mut[i] = vals[k];
			if (usdt_meta_open(&v, mut, size, false, &why) == 0) {
				accepted++;
				usdt_meta_dump(&v, null);
			}
		}
	}
	/* Random word-level damage with values a forger would pick (fixed seed). */
	{
		uint32_t x = 2463534242u, words = (uint32_t)(size / 4);
		unsigned iter, m;

		for (iter = 0; iter < 20000; iter++) {
			struct usdt_meta_view v;
			const char *why;

			memcpy(mut, desc, size);
			for (m = 0; m < 1 + iter % 3; m++) {
				uint32_t pos, val;

				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				pos = x % words;
				x ^= x << 13, x ^= x >> 17, x ^= x << 5;
				switch (x % 6) {
				case 0:
					val = 0;
					break;
				case 1:
					val = 0xffffffffu;
					break;
				case 2:
					val = (uint32_t)size;
					break;
				case 3:
					val = (uint32_t)size - 4;
					break;
				case 4:
					val = 0x80000000u + (x >> 8);
					break;
				default:
					val = x >> (x % 24);
					break;
				}
				memcpy(mut + pos * 4, &val, 4);
			}
			if (usdt_meta_open(&v, mut, size, false, &why) == 0) {
				accepted++;
				usdt_meta_dump(&v, null);
			}
		}
	}
	/* Some mutations are harmless (a signedness bit, a string byte). */
	printf("fuzz: %zu bytes, %zu of %zu mutations accepted\n", size, accepted,
	       size * 4 + 20000);
	fflush(stdout);
	fclose(null);
	free(desc);
	free(mut);
	usdt_meta_blob_free(&b);
}

int main(int argc, char **argv)
{
	const char *cc = argc > 1 ? argv[1] : "cc";
	const char *cflags = argc > 2 ? argv[2] : "";
	char dir[] = "/tmp/usdtkit-link-model.XXXXXX", out[256], tmpdir[256];
	struct usdt_program prog, empty;
	struct usdt_link_opts opts;
	struct usdt_diag diag;
	struct found f;
	int k;

	elf_version(EV_CURRENT);
	usdt_diag_init(&diag, stderr, "dtrace");
	build_model(&prog);
	if (!mkdtemp(dir))
		return 1;
	/* Our own TMPDIR: nothing of the -G run may remain in it afterwards. */
	snprintf(tmpdir, sizeof(tmpdir), "%s/tmp", dir);
	mkdir(tmpdir, 0700);
	setenv("TMPDIR", tmpdir, 1);
	snprintf(out, sizeof(out), "%s/prov.o", dir);
	memset(&opts, 0, sizeof(opts));
	opts.output = out;
	opts.cc = cc;
	opts.cflags = cflags;

	CHECKF(usdt_link_object(&prog, &opts, &diag) == 0, "usdt_link_object failed");
	CHECKF(diag.errors == 0 && diag.warnings == 0, "diagnostics: %u errors %u warnings",
	       diag.errors, diag.warnings);
	inspect(out, &f);
	CHECKF(f.nsem == 3, "%d semaphore symbols, want 3", f.nsem);
	for (k = 0; k < 3; k++)
		CHECKF(f.sem_ok[k], "semaphore %s: not GLOBAL HIDDEN OBJECT size 2 in .probes",
		       sem_names[k]);
	CHECKF(f.gnu_stack_ok, "no non-executable .note.GNU-stack");
	CHECKF(f.note_ok, "no metadata note");
	CHECKF(strcmp(f.dump, expected_dump) == 0, "metadata differs:\n%s\nwant:\n%s", f.dump,
	       expected_dump);
	CHECKF(count_entries(tmpdir, "") == 2, "temporary files left in TMPDIR");

	/* An empty program (a .d with only `BEGIN{}`) still gives a valid object. */
	memset(&empty, 0, sizeof(empty));
	unlink(out);
	CHECKF(usdt_link_object(&empty, &opts, &diag) == 0, "empty program failed");
	inspect(out, &f);
	CHECKF(f.note_ok && f.nsem == 0 && strcmp(f.dump, "") == 0, "empty program's object");

	/* A compiler that fails: error, no output, no temporary directory left. */
	unlink(out);
	opts.cc = "false";
	CHECKF(usdt_link_object(&prog, &opts, &diag) != 0, "a failing compiler succeeded");
	CHECKF(access(out, F_OK) != 0, "output exists after a failed compile");
	CHECKF(count_entries(dir, "") == 3, "something left beside the output: %d entries",
	       count_entries(dir, ""));
	CHECKF(count_entries(tmpdir, "") == 2, "temporary files left in TMPDIR");

	fuzz_reader(&prog);

	unlink(out);
	rmdir(tmpdir);
	rmdir(dir);
	if (check_failures)
		fprintf(stderr, "(CC=%s CFLAGS=%s)\n", cc, cflags);
	return check_result();
}
