variable "stream" {
  description = "Stream key the groups live on, for example \"emq:{orders}:stream:main\"."
  type        = string

  validation {
    condition     = length(var.stream) > 0
    error_message = "The stream key must not be empty."
  }
}

variable "services" {
  description = "One consumer group per service: the map key is the group name, group_start is \"new\" or \"head\"."
  type = map(object({
    group_start = string
  }))

  validation {
    condition     = alltrue([for s in values(var.services) : contains(["new", "head"], s.group_start)])
    error_message = "Each service's group_start must be \"new\" or \"head\"."
  }
}
