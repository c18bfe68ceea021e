"""A freqtrade strategy for the gateway's client tests: it enters on every candle and
exits at once, so one short run makes every call a trading bot makes (markets,
candles, order book, ticker, and in live mode orders, their status and balances)."""

from freqtrade.strategy import IStrategy


class PeregrineProbe(IStrategy):
    INTERFACE_VERSION = 3
    timeframe = "1m"
    minimal_roi = {"0": 100}
    stoploss = -0.99
    startup_candle_count = 0
    process_only_new_candles = False

    def populate_indicators(self, dataframe, metadata):
        return dataframe

    def populate_entry_trend(self, dataframe, metadata):
        dataframe["enter_long"] = 1
        return dataframe

    def populate_exit_trend(self, dataframe, metadata):
        dataframe["exit_long"] = 0
        return dataframe

    def custom_exit(self, pair, trade, current_time, current_rate, current_profit, **kwargs):
        return "probe_done"
