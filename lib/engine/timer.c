/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hashed timer wheel (see timer.h). A timer due within one revolution of
 * cur_tick lives in near slot expire_tick % SLOTS, a later one in far slot
 * (expire_tick / SLOTS) % FAR_SLOTS until the revolution it is due in
 * begins (cascade()). A near slot visit fires the timers whose expire_tick
 * has come. Arming rounds up, so a timer never fires early.
 */
#include <rte_cycles.h>

#include "engine/timer.h"

void rnic_timer_init(struct rnic_timer *t, rnic_timer_cb cb, void *arg)
{
	t->next = NULL;
	t->pprev = NULL;
	t->expire_tick = 0;
	t->cb = cb;
	t->arg = arg;
}

void rnic_timer_wheel_init(struct rnic_timer_wheel *tw, uint64_t now_tsc)
{
	for (unsigned i = 0; i < RNIC_TIMER_SLOTS; i++)
		tw->slot[i] = NULL;
	for (unsigned i = 0; i < RNIC_TIMER_FAR_SLOTS; i++)
		tw->far[i] = NULL;
	tw->cascaded = 0;
	tw->looked = 0;
	tw->tsc_per_tick = rte_get_tsc_hz() / 1000000 * RNIC_TIMER_TICK_US;
	if (tw->tsc_per_tick == 0)
		tw->tsc_per_tick = 1;
	tw->cur_tick = now_tsc / tw->tsc_per_tick;
	tw->armed = 0;
	tw->fired = 0;
}

static void timer_link(struct rnic_timer **head, struct rnic_timer *t);

/* The list @p t belongs in: its near slot when it is due before the near
 * wheel comes round to cur_tick again, else the far slot of its
 * revolution. */
static struct rnic_timer **timer_home(struct rnic_timer_wheel *tw,
				      const struct rnic_timer *t)
{
	if (t->expire_tick < tw->cur_tick + RNIC_TIMER_SLOTS)
		return &tw->slot[t->expire_tick & (RNIC_TIMER_SLOTS - 1)];
	return &tw->far[(t->expire_tick / RNIC_TIMER_SLOTS) & (RNIC_TIMER_FAR_SLOTS - 1)];
}

void rnic_timer_cancel(struct rnic_timer_wheel *tw, struct rnic_timer *t)
{
	if (t->pprev == NULL)
		return;
	*t->pprev = t->next;
	if (t->next)
		t->next->pprev = t->pprev;
	t->next = NULL;
	t->pprev = NULL;
	tw->armed--;
}

void rnic_timer_arm(struct rnic_timer_wheel *tw, struct rnic_timer *t,
		    uint64_t now_tsc, uint64_t us)
{
	rnic_timer_cancel(tw, t);
	/* round up to whole ticks, plus one: the current tick may be half over */
	uint64_t ticks = (us + RNIC_TIMER_TICK_US - 1) / RNIC_TIMER_TICK_US + 1;
	uint64_t now_tick = now_tsc / tw->tsc_per_tick;
	if (now_tick < tw->cur_tick)
		now_tick = tw->cur_tick;
	t->expire_tick = now_tick + ticks;
	timer_link(timer_home(tw, t), t);
	tw->armed++;
}

/* Insert @p t at the head of list @p head. */
static void timer_link(struct rnic_timer **head, struct rnic_timer *t)
{
	t->next = *head;
	if (t->next)
		t->next->pprev = &t->next;
	t->pprev = head;
	*head = t;
}

/* Move list @p *from to the local head @p head (whose pprev the first
 * timer then points at, so a callback may cancel timers still on it).
 * @return the list, for the caller to store in *head. */
static struct rnic_timer *list_take(struct rnic_timer **from, struct rnic_timer **head)
{
	struct rnic_timer *l = *from;
	*from = NULL;
	if (l != NULL)
		l->pprev = head;
	return l;
}

/* Unlink and return the first timer of local list @p head (NULL: empty);
 * the caller links it elsewhere or clears it. */
static struct rnic_timer *list_pop(struct rnic_timer **head)
{
	struct rnic_timer *t = *head;
	if (t == NULL)
		return NULL;
	*head = t->next;
	if (*head != NULL)
		(*head)->pprev = head;
	return t;
}

/*
 * Visit one slot at tick @p now_tick. The slot's list is first moved to a
 * local head, so each timer is looked at exactly once however the callbacks
 * change the wheel: a timer not yet due (a later revolution) goes back to
 * the slot, a due one fires. Callbacks may cancel timers still on the local
 * list (pprev works on any list) or arm any timer, themselves included;
 * arming always lands in a later tick, never in this visit.
 */
static unsigned timer_visit_slot(struct rnic_timer_wheel *tw,
				 struct rnic_timer **slot, uint64_t now_tick)
{
	struct rnic_timer *pending = list_take(slot, &pending), *t;
	unsigned fired = 0;

	while ((t = list_pop(&pending)) != NULL) {
		if (t->expire_tick > now_tick) {
			timer_link(slot, t);
			tw->looked++;
			continue;
		}
		t->next = NULL;
		t->pprev = NULL;
		tw->armed--;
		t->cb(t, t->arg);
		fired++;
	}
	return fired;
}

/*
 * Move the timers of far slot @p i that are due before the near wheel
 * comes round again into their near slots (cur_tick is where the near
 * wheel stands); the others wait for a later far revolution.
 */
static void cascade(struct rnic_timer_wheel *tw, unsigned i)
{
	struct rnic_timer *pending = list_take(&tw->far[i], &pending), *t;

	while ((t = list_pop(&pending)) != NULL) {
		timer_link(timer_home(tw, t), t);
		tw->looked++;
	}
}

unsigned rnic_timer_run(struct rnic_timer_wheel *tw, uint64_t now_tsc)
{
	uint64_t now_tick = now_tsc / tw->tsc_per_tick;
	unsigned fired = 0;

	/* after a long stall, one revolution visits every slot once; every
	 * far slot is looked through, as revolution starts were skipped */
	if (now_tick > tw->cur_tick + RNIC_TIMER_SLOTS) {
		tw->cur_tick = now_tick - RNIC_TIMER_SLOTS;
		for (unsigned i = 0; i < RNIC_TIMER_FAR_SLOTS; i++)
			cascade(tw, i);
	}
	for (; tw->cur_tick <= now_tick; tw->cur_tick++) {
		/* a revolution begins: its far timers come near, once */
		if ((tw->cur_tick & (RNIC_TIMER_SLOTS - 1)) == 0 &&
		    tw->cascaded != tw->cur_tick + 1) {
			tw->cascaded = tw->cur_tick + 1;
			cascade(tw, (tw->cur_tick / RNIC_TIMER_SLOTS) & (RNIC_TIMER_FAR_SLOTS - 1));
		}
		fired += timer_visit_slot(tw,
			&tw->slot[tw->cur_tick & (RNIC_TIMER_SLOTS - 1)], now_tick);
		if (tw->cur_tick == now_tick)
			break;   /* revisit this tick next time: it is not over */
	}
	tw->fired += fired;
	return fired;
}
