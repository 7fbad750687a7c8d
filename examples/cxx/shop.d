/*
 * A toy shop's provider, used from C++ (shop.cc). The header dtrace -h makes
 * is the same for C and C++; in C++ a mismatched argument type is a
 * deprecation warning naming the probe (an error with -Werror).
 */
provider shop {
	/* An order: the customer's name (const: c_str() is), how many items, the total in cents. */
	probe order__placed(const char *customer, int items, long long cents);
	/* An item added to a cart, from a template: its SKU and price in cents. */
	probe cart__add(unsigned sku, int cents);
	/* The cart was emptied: how many items it held. */
	probe cart__clear(unsigned long count);
};
