/* Types the provider shares with the emulator (included by cpp under -C). */
#define ERTS_WORD unsigned long
