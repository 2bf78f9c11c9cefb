/* static inline wrappers that only pass their parameters on to an external function
   (nvJitLink.h's nvJitLinkCreate calls __nvJitLinkCreate_12_5, the symbol the library
   exports): the wrapper's name is bound to the function it calls, with the wrapper's
   docs. Any other inline body is left out, with a line in the log. */
#define CUDART_VERSION 12050

typedef struct widget *widget_t;
typedef enum { WIDGET_SUCCESS = 0, WIDGET_ERROR_INVALID = 1 } widgetResult;

extern widgetResult __widget_open_1_2(widget_t *w, unsigned int flags);
/**
 * \brief Opens a widget.
 *
 * \param [out] w      The new widget.
 * \param [in]  flags  How to open it.
 */
static inline widgetResult widget_open(widget_t *w, unsigned int flags)
{
    return __widget_open_1_2(w, flags);
}

extern widgetResult __widget_size_1_2(widget_t w, unsigned long *size);

/* Not a forwarder: an argument is computed. */
static inline widgetResult widget_size_after(widget_t w, unsigned long *size)
{
    return __widget_size_1_2(w, size + 1);
}

/* Not a forwarder: the parameters in another order than the callee takes them. */
static inline widgetResult widget_size_swapped(unsigned long *size, widget_t w)
{
    return __widget_size_1_2(w, size);
}

/* Not a forwarder: more than the call. */
static inline widgetResult widget_size_kept(widget_t w, unsigned long *size)
{
    widgetResult status = __widget_size_1_2(w, size);
    return status;
}
