// A C++ program with USDT probes: in a member function, in a function
// template (one site per instance), in an inline function, with
// std::string arguments passed as c_str().
// Usage: shop [orders] [delay-ms]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "shop_probes.h"

namespace {

struct item {
	unsigned sku;
	int cents;
};

class cart {
public:
	template <typename It> void add(It first, It last)
	{
		for (; first != last; ++first) {
			SHOP_CART_ADD(first->sku, first->cents);
			items_.push_back(*first);
		}
	}

	long long total() const
	{
		long long t = 0;

		for (const item &i : items_)
			t += i.cents;
		return t;
	}

	int size() const { return static_cast<int>(items_.size()); }

	inline void clear()
	{
		SHOP_CART_CLEAR(items_.size());
		items_.clear();
	}

private:
	std::vector<item> items_;
};

void place_order(const std::string &customer, cart &c)
{
	SHOP_ORDER_PLACED(customer.c_str(), c.size(), c.total());
	std::printf("%s: %d items, %lld cents\n", customer.c_str(), c.size(), c.total());
	c.clear();
}

} // namespace

int main(int argc, char **argv)
{
	const int orders = argc > 1 ? std::atoi(argv[1]) : 3;
	const int delay_ms = argc > 2 ? std::atoi(argv[2]) : 200;
	const std::vector<std::string> customers = { "ada", "grace", "linus" };
	const item catalogue[] = { { 101, 250 }, { 202, 1999 }, { 303, 5 } };

	for (int n = 0; n < orders; n++) {
		cart c;
		std::vector<item> v(catalogue, catalogue + 1 + n % 3);

		c.add(v.begin(), v.end());		// add<std::vector<item>::iterator>
		c.add(catalogue, catalogue + 1);	// add<const item *>
		place_order(customers[static_cast<size_t>(n) % customers.size()], c);
		std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
	}
	return 0;
}
