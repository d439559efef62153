"""Operations: alerts, their webhook, the weekly review and the metric layer they share."""
