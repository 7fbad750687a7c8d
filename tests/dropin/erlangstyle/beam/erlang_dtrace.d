/*
 * The emulator's provider. Run through cpp (-C): sizes come from a header.
 */
#include "dtrace-sizes.h"

provider erlang {
	/**
	 * A process was spawned.
	 * @param p the new process's pid, as a string
	 * @param mfa the module:function/arity it starts in
	 */
	probe process__spawn(char *p, char *mfa);
	/**
	 * A message was sent.
	 * @param sender, receiver pids as strings
	 * @param size the message size in words
	 */
	probe message__send(char *sender, char *receiver, uint32_t size, int token_label);
	probe process__exit(char *p, char *reason);
	probe gc_major__start(char *p, int need, ERTS_WORD heap_size);
};
